package pack

import (
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/offers"
)

// BenchmarkArrival times one pod's arrival through the production
// allocator (demand, a round, the accept) on all 1,523 openb nodes, the
// pods of a trace (default, or gpuspec33 with its GPU model constraints)
// in a seeded order until the cluster's GPUs are requested once over;
// reported per arrival.
func BenchmarkArrival(b *testing.B) {
	nodes, err := LoadNodes("all")
	if err != nil {
		b.Fatal(err)
	}
	for _, pods := range []string{"default", "gpuspec33"} {
		for _, placement := range []offers.Placement{offers.PlacementSpread, offers.PlacementPack} {
			benchArrival(b, nodes, pods, placement)
		}
	}
}

func benchArrival(b *testing.B, nodes []Node, pods string, placement offers.Placement) {
	trace, err := LoadPods(pods)
	if err != nil {
		b.Fatal(err)
	}
	work, err := FillWorkload(trace, GPUCapacity(nodes), 1)
	if err != nil {
		b.Fatal(err)
	}
	{
		b.Run(pods+"/"+string(placement), func(b *testing.B) {
			arrivals := 0
			var spent time.Duration
			clock := testutil.StartBenchClock()
			for range b.N {
				p, err := newAllocPlacer(nodes, placement)
				if err != nil {
					b.Fatal(err)
				}
				capacity := GPUCapacity(nodes)
				clock.Start()
				start := time.Now()
				var asked int64
				for i := range work {
					if asked >= capacity {
						break
					}
					pod := work[i]
					asked += pod.GPURequest()
					p.Place(time.Duration(i)*time.Millisecond, &pod)
					arrivals++
				}
				spent += time.Since(start)
				clock.Stop()
			}
			b.ReportMetric(float64(spent.Microseconds())/float64(arrivals), "µs/arrival")
			clock.Report(b, arrivals, "arrival")
		})
	}
}
