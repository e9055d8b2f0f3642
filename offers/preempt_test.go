package offers

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// cluster is a preemption fixture: an allocator and the tasks it runs.
type cluster struct {
	a     *Allocator
	tasks []RunningTask
	seq   int
}

// newCluster has n agents of cpus milli-CPUs each, under policy pol with
// no delay.
func newCluster(t testing.TB, n int, cpusEach int64, pol PreemptionPolicy) *cluster {
	t.Helper()
	cfg := testConfig(PolicyDynamic)
	cfg.Preemption = PreemptionConfig{Policy: pol, MaxFraction: 1}
	a := newAlloc(t, cfg)
	for i := range n {
		must(t, a.AddAgent(agentInfo(fmt.Sprintf("a%d", i+1), cpus(cpusEach), nil)))
	}
	return &cluster{a: a}
}

// run starts count tasks of r for fw on agent, started at start plus their
// order (later tasks are newer).
func (c *cluster) run(t testing.TB, fw, agent string, r protocol.Resources, count int, revocable bool) {
	t.Helper()
	for range count {
		must(t, c.a.AddUsage(protocol.FrameworkID(fw), protocol.AgentID(agent), r))
		c.seq++
		c.tasks = append(c.tasks, RunningTask{FrameworkID: protocol.FrameworkID(fw), TaskID: protocol.TaskID(fmt.Sprintf("t%03d", c.seq)),
			AgentID: protocol.AgentID(agent), Resources: r, Revocable: revocable, StartedAt: at(time.Duration(c.seq) * time.Second)})
	}
}

// warn marks the plan's victims warned, as the master does.
func (c *cluster) warn(vs []Victim) {
	for _, v := range vs {
		for i := range c.tasks {
			if c.tasks[i].FrameworkID == v.FrameworkID && c.tasks[i].TaskID == v.TaskID {
				c.tasks[i].Warned = true
			}
		}
	}
}

// kill ends the victims' tasks, as their deadline does.
func (c *cluster) kill(t testing.TB, vs []Victim) {
	t.Helper()
	for _, v := range vs {
		for i, rt := range c.tasks {
			if rt.FrameworkID == v.FrameworkID && rt.TaskID == v.TaskID {
				must(t, c.a.Recover(rt.FrameworkID, rt.AgentID, rt.Resources))
				c.tasks = append(c.tasks[:i], c.tasks[i+1:]...)
				break
			}
		}
	}
}

// batchHoldsAll is the scenario of docs/preemption.md: eng/batch runs 12 one-CPU tasks on
// three 4-CPU agents; eng/prod (weight 3, guarantee 2 CPUs) asks for more.
func batchHoldsAll(t testing.TB, pol PreemptionPolicy) *cluster {
	t.Helper()
	c := newCluster(t, 3, 4000, pol)
	must(t, c.a.SetRole("eng/prod", 3))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "batch", Role: "eng/batch"}))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "prod", Role: "eng/prod"}))
	for i := 1; i <= 3; i++ {
		c.run(t, "batch", fmt.Sprintf("a%d", i), cpus(1000), 4, false)
	}
	must(t, c.a.SetRoleGuarantee("eng/prod", cpus(2000)))
	demand(t, c.a, "prod", Demand{Resources: cpus(1000), Count: Unlimited})
	return c
}

func TestPlanPreemption_guaranteeTakesFewestTasks(t *testing.T) {
	c := batchHoldsAll(t, PreemptGuarantees)
	p := c.a.PlanPreemption(c.tasks, t0)
	if len(p.Preempt) != 2 {
		t.Fatalf("preempted %d tasks for a 2-CPU guarantee of 1-CPU tasks, want 2: %+v", len(p.Preempt), p.Preempt)
	}
	for _, v := range p.Preempt {
		if v.FrameworkID != "batch" || v.Reason != protocol.ReasonPreempted || v.For != "role eng/prod" {
			t.Fatalf("victim %+v, want a batch task preempted for role eng/prod", v)
		}
	}
	// The most recently started go first: t012 and t011 are the newest.
	if p.Preempt[0].TaskID != "t011" || p.Preempt[1].TaskID != "t012" {
		t.Fatalf("victims %s, %s; want the newest, t011 and t012", p.Preempt[0].TaskID, p.Preempt[1].TaskID)
	}

	// Warned, they cover the need: the next plan keeps them and takes
	// nothing more.
	c.warn(p.Preempt)
	p2 := c.a.PlanPreemption(c.tasks, at(time.Second))
	if len(p2.Preempt) != 0 || len(p2.Keep) != 2 || len(p2.Release) != 0 {
		t.Fatalf("second plan: preempt %v keep %v release %v; want the 2 warned kept and nothing new", p2.Preempt, p2.Keep, p2.Release)
	}
}

func TestPlanPreemption_offTakesNothing(t *testing.T) {
	c := batchHoldsAll(t, PreemptOff)
	if p := c.a.PlanPreemption(c.tasks, t0); len(p.Preempt) != 0 || len(p.Needs) != 0 {
		t.Fatalf("policy off: %+v, want nothing", p)
	}
}

// Under fair, eng/prod (weight 3 against 1) is owed 9 of the 12 CPUs: the
// guarantee's 2, then 7 more, and batch keeps its fair 3.
func TestPlanPreemption_fairShare(t *testing.T) {
	c := batchHoldsAll(t, PreemptFair)
	p := c.a.PlanPreemption(c.tasks, t0)
	if len(p.Preempt) != 9 {
		t.Fatalf("preempted %d, want 9 (prod's fair share)", len(p.Preempt))
	}
	byFor := map[string]int{}
	for _, v := range p.Preempt {
		byFor[v.For]++
	}
	if byFor["role eng/prod"] != 2 || byFor["framework prod"] != 7 {
		t.Fatalf("victims by need %v, want 2 for the guarantee and 7 for the fair share", byFor)
	}
	c.warn(p.Preempt)
	if p2 := c.a.PlanPreemption(c.tasks, at(time.Second)); len(p2.Preempt) != 0 || len(p2.Keep) != 9 {
		t.Fatalf("second plan: %d new, %d kept; want 0 and 9", len(p2.Preempt), len(p2.Keep))
	}
}

// Under guarantees, a framework below its fair share takes back revocable
// tasks only.
func TestPlanPreemption_revokesLentResources(t *testing.T) {
	c := newCluster(t, 1, 4000, PreemptGuarantees)
	must(t, c.a.AddFramework(FrameworkInfo{ID: "lender", Role: "a"}))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "borrower", Role: "b"}))
	c.run(t, "borrower", "a1", cpus(1000), 2, false)
	c.run(t, "borrower", "a1", cpus(1000), 2, true)
	demand(t, c.a, "lender", Demand{Resources: cpus(1000), Count: 2})
	p := c.a.PlanPreemption(c.tasks, t0)
	if len(p.Preempt) != 2 {
		t.Fatalf("revoked %d, want the 2 revocable tasks: %+v", len(p.Preempt), p)
	}
	for _, v := range p.Preempt {
		if v.Reason != protocol.ReasonRevoked || (v.TaskID != "t003" && v.TaskID != "t004") {
			t.Fatalf("victim %+v, want a revocable task revoked", v)
		}
	}
}

// A need waits out the delay; a need that goes away forgets when it began.
func TestPlanPreemption_delay(t *testing.T) {
	c := batchHoldsAll(t, PreemptGuarantees)
	c.a.cfg.Preemption.Delay = 10 * time.Second
	p := c.a.PlanPreemption(c.tasks, t0)
	if len(p.Preempt) != 0 || len(p.Needs) == 0 || !p.Needs[0].EligibleAt.Equal(at(10*time.Second)) {
		t.Fatalf("before the delay: %+v; want the need listed, eligible at +10s, nothing taken", p)
	}
	if p := c.a.PlanPreemption(c.tasks, at(10*time.Second)); len(p.Preempt) != 2 {
		t.Fatalf("after the delay: %d preempted, want 2", len(p.Preempt))
	}
	must(t, c.a.SetDemand("prod", nil))
	c.a.PlanPreemption(c.tasks, at(11*time.Second))
	demand(t, c.a, "prod", Demand{Resources: cpus(1000), Count: Unlimited})
	if p := c.a.PlanPreemption(c.tasks, at(12*time.Second)); len(p.Preempt) != 0 || !p.Needs[0].Since.Equal(at(12*time.Second)) {
		t.Fatalf("a need back after going away: %+v, want it new again", p)
	}
}

// Non-preemptible tasks are never taken; warned tasks no longer needed are
// released.
func TestPlanPreemption_nonPreemptibleAndRelease(t *testing.T) {
	c := batchHoldsAll(t, PreemptGuarantees)
	for i := range c.tasks {
		c.tasks[i].NonPreemptible = true
	}
	if p := c.a.PlanPreemption(c.tasks, t0); len(p.Preempt) != 0 || !p.Needs[0].Blocked {
		t.Fatalf("all non-preemptible: %+v, want nothing taken and the need blocked", p)
	}
	for i := range c.tasks {
		c.tasks[i].NonPreemptible = false
	}
	p := c.a.PlanPreemption(c.tasks, t0)
	c.warn(p.Preempt)
	must(t, c.a.SetDemand("prod", nil))
	p2 := c.a.PlanPreemption(c.tasks, at(time.Second))
	if len(p2.Release) != 2 || len(p2.Keep) != 0 {
		t.Fatalf("need gone: keep %v release %v, want both warned released", p2.Keep, p2.Release)
	}
}

// Freed resources cover a need before any task is taken.
func TestPlanPreemption_freeFirst(t *testing.T) {
	c := batchHoldsAll(t, PreemptGuarantees)
	c.kill(t, []Victim{{FrameworkID: "batch", TaskID: "t001"}})
	p := c.a.PlanPreemption(c.tasks, t0)
	if len(p.Preempt) != 1 {
		t.Fatalf("one CPU free: preempted %d, want 1", len(p.Preempt))
	}
}
