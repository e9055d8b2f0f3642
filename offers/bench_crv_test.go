package offers

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// BenchmarkCRVRound times one allocation round with and without CRV
// steering: 10,000 agents of 8 CPUs / 32 GiB, every tenth with gpu=a100;
// 1,000 frameworks in 10 roles, every tenth needing gpu == a100, each
// wanting 40 tasks of 1 CPU / 2 GiB (40,000 tasks, half the cluster). One op
// is the first round.
func BenchmarkCRVRound(b *testing.B) {
	for _, crv := range []bool{false, true} {
		b.Run(fmt.Sprintf("crv=%v", crv), func(b *testing.B) {
			var offers int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				a := crvBenchCluster(b, crv)
				b.StartTimer()
				offers = len(a.Allocate(time.Unix(1_000_000, 0)).Offers)
			}
			b.ReportMetric(float64(offers), "offers/round")
		})
	}
}

func crvBenchCluster(tb testing.TB, crv bool) *Allocator {
	cfg := DefaultConfig()
	cfg.DisableCRV = !crv
	a := mustNew(tb, cfg)
	for i := 0; i < 10000; i++ {
		var attrs protocol.Attributes
		if i%10 == 0 {
			attrs = protocol.Attributes{"gpu": protocol.Text("a100")}
		}
		mustOK(tb, a.AddAgent(AgentInfo{ID: protocol.AgentID(fmt.Sprintf("agent-%d", i)), Attributes: attrs,
			Total: protocol.Scalars(map[string]int64{protocol.ResCPUs: 8000, protocol.ResMem: 32 * 1024})}))
	}
	task := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 2048})
	gpu := []protocol.Constraint{{Attribute: "gpu", Op: protocol.OpEq, Value: "a100"}}
	for i := 0; i < 1000; i++ {
		id := protocol.FrameworkID(fmt.Sprintf("fw-%d", i))
		mustOK(tb, a.AddFramework(FrameworkInfo{ID: id, Role: fmt.Sprintf("role-%d", i%10)}))
		d := Demand{Resources: task, Count: 40}
		if i%10 == 0 {
			d.Constraints = gpu
		}
		mustOK(tb, a.SetDemand(id, []Demand{d}))
	}
	return a
}
