package offers

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// preemptBench is a large cluster for BenchmarkPlanPreemption: 10,000
// agents, 1,000 roles three levels deep (10×10×10, random weights), a
// framework under nine leaf roles in ten running 100,000 tasks of 1 to 4
// CPUs (4 GiB a CPU) between them, ten on each agent, which has at most
// half a CPU more (a fifth of the tasks revocable, a few non-preemptible),
// demandPercent of the frameworks with pending demand, and twenty
// second-level roles given guarantees above what they hold while two of
// their frameworks ask for more. A few roles turn to policy fair; the rest take the default
// (guarantees: revocable tasks for fair shares).
type preemptBench struct {
	a     *Allocator
	tasks []RunningTask
	fws   []protocol.FrameworkID
}

func newPreemptBench(b *testing.B, demandPercent int) *preemptBench {
	b.Helper()
	return newPreemptCluster(b, 10000, demandPercent, 42)
}

// newPreemptCluster builds preemptBench's cluster with the given number of
// agents, from seed.
func newPreemptCluster(b testing.TB, agents, demandPercent int, seed uint64) *preemptBench {
	b.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	cfg := testConfig(PolicyDynamic)
	cfg.Preemption = PreemptionConfig{Policy: PreemptGuarantees, Delay: 0, MaxFraction: 0.2}
	a := newAlloc(b, cfg)
	// Each agent runs ten tasks of 1 to 4 CPUs and has up to half a CPU
	// more: the cluster is full but for crumbs.
	type placed struct {
		cpu, mem int64
	}
	perAgent := make([][]placed, agents)
	for i := range agents {
		var cpu, mem int64
		for range 10 {
			c := int64(1+r.IntN(4)) * 1000
			perAgent[i] = append(perAgent[i], placed{c, c * 4})
			cpu, mem = cpu+c, mem+c*4
		}
		spare := int64(r.IntN(2)) * 500
		must(b, a.AddAgent(agentInfo(fmt.Sprintf("a%05d", i), cpuMem(cpu+spare, mem+spare*4), nil)))
	}
	pb := &preemptBench{a: a}
	for i := range 10 {
		for j := range 10 {
			for k := range 10 {
				path := fmt.Sprintf("r%d/r%d/r%d", i, j, k)
				must(b, a.SetRole(path, float64(1+r.IntN(3))))
				if r.IntN(10) == 0 {
					continue
				}
				id := protocol.FrameworkID(fmt.Sprintf("f%d%d%d", i, j, k))
				must(b, a.AddFramework(FrameworkInfo{ID: id, Role: path}))
				pb.fws = append(pb.fws, id)
			}
		}
	}
	for i := range 100 {
		if r.IntN(10) == 0 {
			must(b, a.SetRolePreemption(fmt.Sprintf("r%d/r%d", i/10, i%10), PreemptFair))
		}
	}
	// 100,000 tasks, agent by agent, each agent holding a mix of
	// frameworks, the newest started last.
	start := time.Unix(1_000_000, 0)
	n := 0
	for ag, list := range perAgent {
		id := protocol.AgentID(fmt.Sprintf("a%05d", ag))
		for _, t := range list {
			f := pb.fws[r.IntN(len(pb.fws))]
			res := cpuMem(t.cpu, t.mem)
			must(b, a.AddUsage(f, id, res))
			pb.tasks = append(pb.tasks, RunningTask{FrameworkID: f, TaskID: protocol.TaskID(fmt.Sprintf("t%06d", n)), AgentID: id,
				Resources: res, Revocable: r.IntN(5) == 0, NonPreemptible: r.IntN(50) == 0,
				StartedAt: start.Add(time.Duration(r.IntN(100000)) * time.Millisecond)})
			n++
		}
	}
	for _, f := range pb.fws {
		if r.IntN(100) < demandPercent {
			cpu := int64(1+r.IntN(4)) * 1000
			demand(b, a, string(f), Demand{Resources: cpuMem(cpu, cpu*4), Count: int64(5 + r.IntN(20))})
		}
	}
	// Guarantees above what twenty roles hold, whose frameworks want more.
	for i := range 20 {
		path := fmt.Sprintf("r%d/r%d", i%10, i/2)
		n := a.tree.roles[path]
		held := n.held.at(a.reg.id(protocol.ResCPUs))
		must(b, a.SetRoleGuarantee(path, cpus(held+int64(10+r.IntN(20))*1000)))
		asked := 0
		for k := range 10 {
			id := fmt.Sprintf("f%d%d%d", i%10, i/2, k)
			if _, ok := a.frameworks[protocol.FrameworkID(id)]; ok && asked < 2 {
				demand(b, a, id, Demand{Resources: cpuMem(1000, 4000), Count: 15})
				asked++
			}
		}
	}
	return pb
}

// BenchmarkPlanPreemption plans on the large cluster, where twenty
// guaranteed roles and one framework in fifty want more: warm, with the
// fair-share cache filled by the plan before; cold, the first plan after a
// change of demand; and burst, warm again with one framework in ten
// wanting more (a plan of a thousand victims).
func BenchmarkPlanPreemption(b *testing.B) {
	pb := newPreemptBench(b, 2)
	now := time.Unix(2_000_000, 0)
	b.Run("warm", func(b *testing.B) { benchPlan(b, pb, now) })
	b.Run("cold", func(b *testing.B) { benchCold(b, pb, now) })
	b.Run("burst", func(b *testing.B) { benchPlan(b, newPreemptBench(b, 10), now) })
	// A batch framework queueing 5,000 tasks asks for more than the
	// cluster holds, so each fair-share fill after a change runs task by
	// task instead of giving every framework what it asks for.
	over := newPreemptBench(b, 2)
	demand(b, over.a, string(over.fws[0]), Demand{Resources: cpuMem(1000, 4000), Count: 5000})
	b.Run("cold-oversubscribed", func(b *testing.B) { benchCold(b, over, now) })
}

// benchCold plans after changing one framework's demand each time.
func benchCold(b *testing.B, pb *preemptBench, now time.Time) {
	var p PreemptionPlan
	ch := newChurn(pb)
	runtime.GC()
	clock := testutil.StartBenchClock()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		clock.Stop()
		f := pb.fws[1+i%(len(pb.fws)-1)]
		demand(b, pb.a, string(f), Demand{Resources: cpuMem(1000, 4000), Count: int64(1 + i%7)})
		tasks := ch.next()
		clock.Start()
		b.StartTimer()
		p = pb.a.PlanPreemption(tasks, now)
	}
	b.StopTimer()
	clock.Report(b, 0, "")
	b.ReportMetric(float64(len(p.Preempt)), "victims")
}

func benchPlan(b *testing.B, pb *preemptBench, now time.Time) {
	ch := newChurn(pb)
	p := pb.a.PlanPreemption(ch.next(), now)
	// Building the cluster leaves garbage a leader would not have.
	runtime.GC()
	clock := testutil.StartBenchClock()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		clock.Stop()
		tasks := ch.next()
		clock.Start()
		b.StartTimer()
		p = pb.a.PlanPreemption(tasks, now)
	}
	b.StopTimer()
	clock.Report(b, 0, "")
	b.ReportMetric(float64(len(p.Preempt)), "victims")
	b.ReportMetric(float64(len(p.Needs)), "needs")
}

// churn hands each plan a new list of the running tasks, as a leader
// builds one from its state: between two plans, churnTasks tasks end and
// as many start (the same resources restarted where they ran, so that the
// allocator's usage stays right).
type churn struct {
	pb    *preemptBench
	r     *rand.Rand
	out   map[int]bool
	clock time.Time
	// warned are the tasks to list as warned.
	warned map[protocol.TaskID]bool
}

const churnTasks = 500

func newChurn(pb *preemptBench) *churn {
	return &churn{pb: pb, r: rand.New(rand.NewPCG(7, 7)), out: map[int]bool{}, clock: time.Unix(1_500_000, 0)}
}

func (c *churn) next() []RunningTask {
	tasks := c.pb.tasks
	for _, i := range slices.Sorted(maps.Keys(c.out)) {
		c.clock = c.clock.Add(time.Millisecond)
		tasks[i].StartedAt = c.clock
	}
	back := c.out
	c.out = map[int]bool{}
	for len(c.out) < churnTasks {
		if i := c.r.IntN(len(tasks)); !back[i] {
			c.out[i] = true
		}
	}
	list := make([]RunningTask, 0, len(tasks))
	for i, t := range tasks {
		if !c.out[i] {
			t.Warned = c.warned[t.TaskID]
			list = append(list, t)
		}
	}
	return list
}
