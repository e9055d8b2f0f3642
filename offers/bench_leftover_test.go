package offers

import (
	"fmt"
	"time"

	"testing"

	"github.com/allot-project/allot/protocol"
)

// BenchmarkLeftoverAllocations is BenchmarkMultiFrameworkAllocations with
// altruistic frameworks: each declares a quarter of its tasks (rounded up)
// as must-start and the rest as optional, with its remaining work (tasks ×
// CPUs, so the small CI jobs come first), so three quarters of the 19,500
// tasks are placed by the leftover phase. One op places every task.
func BenchmarkLeftoverAllocations(b *testing.B) {
	for _, order := range LeftoverOrders() {
		b.Run(string(order), func(b *testing.B) {
			var rounds int
			var leftover int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				a, fws := multiFrameworkCluster(b, false)
				a.cfg.LeftoverOrder = order
				for _, f := range fws {
					must := (f.left + 3) / 4
					mustOK(b, a.Declare(f.id, Declaration{
						Demand:        []Demand{{Resources: f.task, Count: f.left}},
						MustStart:     []Demand{{Resources: f.task, Count: must}},
						Optional:      []Demand{{Resources: f.task, Count: f.left - must}},
						RemainingWork: float64(f.left*f.task.Scalar(protocol.ResCPUs)) / 1000,
					}))
				}
				b.StartTimer()
				rounds = placeAll(b, a, fws)
				b.StopTimer()
				leftover = 0
				for _, f := range a.frameworks {
					for _, s := range f.optional {
						leftover += s.count
					}
				}
				if leftover != 0 {
					b.Fatalf("%d optional tasks left", leftover)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(rounds), "rounds/op")
		})
	}
}

// BenchmarkLeftoverRound times one allocation round whose whole work is the
// leftover phase: 100 altruistic frameworks in 10 roles declare no fair
// demand and 100 optional tasks each (10,000 pending), in two shapes (1 CPU
// / 2 GB and 0.5 CPU / 4 GB), with distinct remaining work, on 200 idle
// agents of 32 CPUs and 128 GB that fit about 8,500 of them. One op is the
// first round; offers/round and tasks/round say what it placed.
func BenchmarkLeftoverRound(b *testing.B) {
	for _, order := range LeftoverOrders() {
		b.Run(string(order), func(b *testing.B) {
			var offers, tasks int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				a := leftoverCluster(b, order)
				b.StartTimer()
				d := a.Allocate(time.Unix(1_000_000, 0))
				b.StopTimer()
				offers, tasks = int64(len(d.Offers)), 0
				for _, o := range d.Offers {
					if o.Kind != KindLeftover {
						b.Fatalf("offer of kind %s in a leftover-only round", o.Kind)
					}
					tasks += o.Tasks
				}
				b.StartTimer()
			}
			if tasks == 0 || tasks >= 10_000 {
				b.Fatalf("round placed %d tasks; want some but not all of 10,000", tasks)
			}
			b.ReportMetric(float64(offers), "offers/round")
			b.ReportMetric(float64(tasks), "tasks/round")
		})
	}
}

func leftoverCluster(tb testing.TB, order LeftoverOrder) *Allocator {
	cfg := DefaultConfig()
	cfg.LeftoverOrder = order
	a := mustNew(tb, cfg)
	for i := 0; i < 200; i++ {
		mustOK(tb, a.AddAgent(AgentInfo{ID: protocol.AgentID(fmt.Sprintf("agent-%d", i)), Total: protocol.Scalars(
			map[string]int64{protocol.ResCPUs: 32000, protocol.ResMem: 128 * 1024})}))
	}
	small := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 2048})
	wide := protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 4096})
	for i := 0; i < 100; i++ {
		id := protocol.FrameworkID(fmt.Sprintf("fw-%d", i))
		mustOK(tb, a.AddFramework(FrameworkInfo{ID: id, Role: fmt.Sprintf("role-%d", i%10)}))
		mustOK(tb, a.Declare(id, Declaration{
			Optional:      []Demand{{Resources: small, Count: 50}, {Resources: wide, Count: 50}},
			RemainingWork: float64(100 + (i*37)%100),
		}))
	}
	return a
}
