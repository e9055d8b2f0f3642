package offers

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// BenchmarkChurnBlockedRole measures one task completion and the round
// that refills it, on a saturated cluster where one role stands far above
// its siblings' level: role x/g's two GPU frameworks hold all 5,000 GPUs
// (share 1.0) while the CPU frameworks beside it (x/c, x, and role y) stand
// at half the CPUs. Scale-down views x/g at x's level, half its fill below
// its vector, on every re-evaluation of x. Completions are drawn uniformly
// from the running tasks, a fifth of them GPU tasks.
func BenchmarkChurnBlockedRole(b *testing.B) {
	a := mustNew(b, DefaultConfig())
	for i := 0; i < 100; i++ {
		mustOK(b, a.AddAgent(AgentInfo{ID: protocol.AgentID(fmt.Sprintf("agent-%d", i)), Total: protocol.Scalars(
			map[string]int64{protocol.ResCPUs: 200_000, protocol.ResGPUs: 50})}))
	}
	cpu := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000})
	gpu := protocol.Scalars(map[string]int64{protocol.ResGPUs: 1})
	shape := map[protocol.FrameworkID]protocol.Resources{}
	for _, f := range []struct {
		id, role string
		task     protocol.Resources
	}{
		{"g1", "x/g", gpu}, {"g2", "x/g", gpu},
		{"c1", "x/c", cpu}, {"c2", "x/c", cpu}, {"c3", "x", cpu},
		{"y1", "y", cpu},
	} {
		id := protocol.FrameworkID(f.id)
		mustOK(b, a.AddFramework(FrameworkInfo{ID: id, Role: f.role}))
		mustOK(b, a.SetDemand(id, []Demand{{Resources: f.task, Count: Unlimited}}))
		shape[id] = f.task
	}
	type task struct {
		fw protocol.FrameworkID
		ag protocol.AgentID
	}
	var running []task
	now := time.Unix(1_000_000, 0)
	refill := func() {
		for {
			now = now.Add(time.Millisecond)
			d := a.Allocate(now)
			if len(d.Offers) == 0 {
				return
			}
			for _, o := range d.Offers {
				tasks := make([]protocol.Resources, o.Tasks)
				for i := range tasks {
					tasks[i] = shape[o.FrameworkID]
				}
				if _, err := a.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, tasks, now); err != nil {
					b.Fatal(err)
				}
				for range tasks {
					running = append(running, task{o.FrameworkID, o.AgentID})
				}
			}
		}
	}
	refill()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := rng.IntN(len(running))
		t := running[k]
		running[k] = running[len(running)-1]
		running = running[:len(running)-1]
		mustOK(b, a.Recover(t.fw, t.ag, shape[t.fw]))
		refill()
	}
}
