package offers

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// benchFramework is one framework kind of the MultiFrameworkAllocations mix.
type benchFramework struct {
	id       protocol.FrameworkID
	task     protocol.Resources
	left     int64
	perOffer int64
}

// BenchmarkMultiFrameworkAllocations ports Mesos's BENCHMARK_Hierarchical
// Allocations.MultiFrameworkAllocations: 80 agents of 64 CPUs and 488 GB; 4
// service frameworks (own roles, 4,000 tasks of 0.07 CPU / 400 MB, at most
// 100 per offer), 500 CI frameworks sharing one role (5 tasks of 0.1 CPU /
// 4 GB, one per offer) and 50 batch frameworks (own roles, 20 tasks of 1 CPU
// / 1 GB, at most 5 per offer): 19,500 tasks. Every framework declares its
// demand and launches up to its per-offer limit from each offer. One op
// places every task; rounds/op is how many allocation rounds that took.
func BenchmarkMultiFrameworkAllocations(b *testing.B) {
	for _, quota := range []bool{false, true} {
		name := "plain"
		if quota {
			name = "quotas"
		}
		// quotas: the same mix with a guarantee of 20 CPUs on each service
		// role, a limit of 300 CPUs on the CI role (its 2,500 tasks need 250) and offer constraints
		// keeping the batch roles off a quarter of the agents.
		b.Run(name, func(b *testing.B) {
			var rounds int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				a, fws := multiFrameworkCluster(b, quota)
				b.StartTimer()
				rounds = placeAll(b, a, fws)
			}
			b.ReportMetric(float64(rounds), "rounds/op")
		})
	}
}

func multiFrameworkCluster(tb testing.TB, quota bool) (*Allocator, map[protocol.FrameworkID]*benchFramework) {
	a := mustNew(tb, DefaultConfig())
	for i := 0; i < 80; i++ {
		mustOK(tb, a.AddAgent(AgentInfo{ID: protocol.AgentID(fmt.Sprintf("agent-%d", i)), Total: protocol.Scalars(
			map[string]int64{protocol.ResCPUs: 64000, protocol.ResMem: 488 * 1024}),
			Attributes: protocol.Attributes{"rack": protocol.Text(fmt.Sprintf("r%d", i%4))}}))
	}
	fws := map[protocol.FrameworkID]*benchFramework{}
	add := func(id, role string, cpus, mem, tasks, perOffer int64) {
		f := &benchFramework{id: protocol.FrameworkID(id), left: tasks, perOffer: perOffer,
			task: protocol.Scalars(map[string]int64{protocol.ResCPUs: cpus, protocol.ResMem: mem})}
		mustOK(tb, a.AddFramework(FrameworkInfo{ID: f.id, Role: role}))
		mustOK(tb, a.SetDemand(f.id, []Demand{{Resources: f.task, Count: tasks}}))
		fws[f.id] = f
	}
	for i := 0; i < 4; i++ {
		add(fmt.Sprintf("service-%d", i), fmt.Sprintf("service-%d", i), 70, 400, 4000, 100)
	}
	for i := 0; i < 500; i++ {
		add(fmt.Sprintf("ci-%d", i), "ci", 100, 4096, 5, 1)
	}
	for i := 0; i < 50; i++ {
		add(fmt.Sprintf("batch-%d", i), fmt.Sprintf("batch-%d", i), 1000, 1024, 20, 5)
	}
	if quota {
		for i := 0; i < 4; i++ {
			mustOK(tb, a.SetRoleGuarantee(fmt.Sprintf("service-%d", i), protocol.Scalars(map[string]int64{protocol.ResCPUs: 20000})))
		}
		mustOK(tb, a.SetRoleLimit("ci", protocol.Scalars(map[string]int64{protocol.ResCPUs: 300000})))
		for i := 0; i < 50; i++ {
			mustOK(tb, a.SetRoleOfferConstraints(fmt.Sprintf("batch-%d", i),
				[]protocol.Constraint{{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r0", "r1", "r2"}}}))
		}
	}
	return a, fws
}

// placeAll runs rounds until every framework has launched all its tasks.
func placeAll(tb testing.TB, a *Allocator, fws map[protocol.FrameworkID]*benchFramework) int {
	now := time.Unix(1_000_000, 0)
	left := int64(0)
	for _, f := range fws {
		left += f.left
	}
	rounds := 0
	for left > 0 {
		if rounds > 1000 {
			tb.Fatalf("%d tasks still unplaced after %d rounds", left, rounds)
		}
		now = now.Add(100 * time.Millisecond)
		d := a.Allocate(now)
		rounds++
		for _, o := range d.Offers {
			f := fws[o.FrameworkID]
			n := min(o.Tasks, f.perOffer, f.left)
			tasks := make([]protocol.Resources, n)
			for i := range tasks {
				tasks[i] = f.task
			}
			if _, err := a.Accept(f.id, []protocol.OfferID{o.ID}, tasks, now); err != nil {
				tb.Fatal(err)
			}
			f.left -= n
			left -= n
		}
	}
	return rounds
}

// BenchmarkDeepRoleTree builds 3,000 roles three levels deep (10 x 10 x 30),
// one framework in each, on 3,000 agents of 2 CPUs / 2 GB, shaped like
// Mesos's LargeAndSmallQuota: 2,500 frameworks want one task of 1 CPU / 1 GB
// and 500 want four. The "full" op is the first round, which places all
// 4,500 tasks; the "empty" op is a round after that with nothing to place.
func BenchmarkDeepRoleTree(b *testing.B) {
	b.Run("full", func(b *testing.B) {
		var offers int
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			a := deepRoleTree(b)
			b.StartTimer()
			offers = len(a.Allocate(time.Unix(1_000_000, 0)).Offers)
		}
		b.ReportMetric(float64(offers), "offers/round")
	})
	b.Run("empty", func(b *testing.B) {
		a := deepRoleTree(b)
		now := time.Unix(1_000_000, 0)
		for _, o := range a.Allocate(now).Offers {
			tasks := make([]protocol.Resources, o.Tasks)
			for i := range tasks {
				tasks[i] = deepTask()
			}
			if _, err := a.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, tasks, now); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			now = now.Add(time.Second)
			if d := a.Allocate(now); len(d.Offers) != 0 {
				b.Fatalf("empty round made %d offers", len(d.Offers))
			}
		}
	})
}

func deepTask() protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 1024})
}

func deepRoleTree(tb testing.TB) *Allocator {
	a := mustNew(tb, DefaultConfig())
	for i := 0; i < 3000; i++ {
		mustOK(tb, a.AddAgent(AgentInfo{ID: protocol.AgentID(fmt.Sprintf("agent-%d", i)), Total: protocol.Scalars(
			map[string]int64{protocol.ResCPUs: 2000, protocol.ResMem: 2048})}))
	}
	n := 0
	for x := 0; x < 10; x++ {
		for y := 0; y < 10; y++ {
			for z := 0; z < 30; z++ {
				role := fmt.Sprintf("org%d/team%d/svc%d", x, y, z)
				id := protocol.FrameworkID(fmt.Sprintf("fw-%d", n))
				mustOK(tb, a.AddFramework(FrameworkInfo{ID: id, Role: role}))
				count := int64(1)
				if n%6 == 5 {
					count = 4
				}
				mustOK(tb, a.SetDemand(id, []Demand{{Resources: deepTask(), Count: count}}))
				n++
			}
		}
	}
	return a
}
