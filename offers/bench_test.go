package offers

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// benchAgentTotal is a Mesos DeclineOffers agent: 24 CPUs, 4 GiB of memory
// and disk, ports 31000-32000.
func benchAgentTotal() protocol.Resources {
	return protocol.Resources{
		Scalars: map[string]int64{protocol.ResCPUs: 24000, protocol.ResMem: 4096, protocol.ResDisk: 4096},
		Ranges:  map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 32000}}},
	}
}

// benchAgentUsed is what DeclineOffers has already allocated on each agent:
// 16 CPUs, 1 GiB of memory and disk, and 16 port fragments.
func benchAgentUsed() protocol.Resources {
	var ports protocol.Ranges
	for i := uint64(0); i < 16; i++ {
		ports = append(ports, protocol.Range{Begin: 31000 + 2*i, End: 31000 + 2*i})
	}
	return protocol.Resources{
		Scalars: map[string]int64{protocol.ResCPUs: 16000, protocol.ResMem: 1024, protocol.ResDisk: 1024},
		Ranges:  map[string]protocol.Ranges{protocol.ResPorts: ports},
	}
}

// BenchmarkDeclineOffers ports Mesos's HierarchicalAllocator_BENCHMARK_Test.
// DeclineOffers: every framework (none declares demand, all in role "*")
// declines everything it is offered with a long filter, so filters pile up
// round after round. One op is one round: Allocate plus every decline.
func BenchmarkDeclineOffers(b *testing.B) {
	type size struct{ agents, fws int }
	var sizes []size
	for _, agents := range []int{1000, 10000, 20000} {
		for _, fws := range []int{100, 1000, 2000} {
			sizes = append(sizes, size{agents, fws})
		}
	}
	if !testing.Short() {
		sizes = append(sizes, size{50000, 5000})
	}
	for _, sz := range sizes {
		b.Run(fmt.Sprintf("agents=%d/frameworks=%d", sz.agents, sz.fws), func(b *testing.B) {
			a := mustNew(b, DefaultConfig())
			for i := 0; i < sz.fws; i++ {
				mustOK(b, a.AddFramework(FrameworkInfo{ID: benchFW(i), Role: "*"}))
			}
			used := benchAgentUsed()
			for i := 0; i < sz.agents; i++ {
				id := protocol.AgentID(fmt.Sprintf("agent-%d", i))
				mustOK(b, a.AddAgent(AgentInfo{ID: id, Total: benchAgentTotal()}))
				mustOK(b, a.AddUsage(benchFW(i%sz.fws), id, used))
			}
			now := time.Unix(1_000_000, 0)
			offers := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now = now.Add(time.Second)
				d := a.Allocate(now)
				offers += len(d.Offers)
				for _, o := range d.Offers {
					if err := a.Decline(o.FrameworkID, []protocol.OfferID{o.ID}, 365*24*time.Hour, now); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(offers)/float64(b.N), "offers/round")
		})
	}
}

func benchFW(i int) protocol.FrameworkID { return protocol.FrameworkID(fmt.Sprintf("fw-%d", i)) }

func mustNew(tb testing.TB, cfg Config) *Allocator {
	tb.Helper()
	a, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func mustOK(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
