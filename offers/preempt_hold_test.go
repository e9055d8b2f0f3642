package offers

import (
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestPreemptHold_partialKill: a guarantee's task needs two victims on one
// agent, and only the first has died (the second's warning came later).
// The room the first freed is held for the role the victims were chosen
// for: a round does not hand it to another role short of its guarantee
// (dev, whose guarantee came after the plan), whose task the next plan
// would have to take again. Once the second dies, the role gets the whole
// room, though less is unallocated than the two guarantees lack. Without
// the hold (round.go's turnHeld skipped), dev takes the freed half; with
// the old headroom rule (an allocation never leaves less unallocated than
// is owed, guarantee.go), prod gets nothing either: both fail the test.
func TestPreemptHold_partialKill(t *testing.T) {
	c := newCluster(t, 2, 1000, PreemptGuarantees)
	must(t, c.a.AddFramework(FrameworkInfo{ID: "batch", Role: "batch"}))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "prod", Role: "prod"}))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "dev", Role: "dev"}))
	c.run(t, "batch", "a1", cpus(500), 2, false)
	c.run(t, "batch", "a2", cpus(500), 2, false)
	must(t, c.a.SetRoleGuarantee("prod", cpus(1000)))
	demand(t, c.a, "prod", Demand{Resources: cpus(1000), Count: 1})

	plan := c.a.PlanPreemption(c.tasks, at(0))
	if len(plan.Preempt) != 2 {
		t.Fatalf("plan chose %+v, want two batch tasks for prod", plan.Preempt)
	}
	for _, v := range plan.Preempt {
		if v.For != "role prod" || v.AgentID != plan.Preempt[0].AgentID {
			t.Fatalf("plan chose %+v, want two batch tasks on one agent for prod", plan.Preempt)
		}
	}
	c.warn(plan.Preempt)
	must(t, c.a.SetRoleGuarantee("dev", cpus(500)))
	demand(t, c.a, "dev", Demand{Resources: cpus(500), Count: Unlimited})
	// The first victim reaches its deadline; the second's comes later.
	c.kill(t, plan.Preempt[:1])
	d := c.a.Allocate(at(1))
	if len(d.Offers) > 0 {
		t.Fatalf("the freed half offered (%+v) while held for prod", d.Offers)
	}
	c.kill(t, plan.Preempt[1:])
	d = c.a.Allocate(at(2))
	if len(d.Offers) != 1 || d.Offers[0].FrameworkID != "prod" || d.Offers[0].AgentID != plan.Preempt[0].AgentID ||
		d.Offers[0].Resources.Scalars[protocol.ResCPUs] != 1000 {
		t.Fatalf("once both victims were gone, offers %+v, want prod's 1000 milli-CPUs", d.Offers)
	}
}

// TestPreemptHold_headroom: prod is half a CPU short of its guarantee and
// asks for a 1-CPU task, so half of it must come from the headroom beyond
// what the guarantees lack (half a CPU here, qa's guarantee holding the
// rest). The plan counts a2's free room for it; a round that reaches a1
// first must not give batch that half, which would leave prod's task
// held back and the plan believing it served. The room held for prod
// counts as prod's when the round weighs batch's allocation. Without it
// (outsider always false) batch gets a1 and prod nothing.
func TestPreemptHold_headroom(t *testing.T) {
	c := newCluster(t, 1, 500, PreemptGuarantees)
	must(t, c.a.AddAgent(agentInfo("a2", cpus(1000), nil)))
	must(t, c.a.AddAgent(agentInfo("a3", cpus(2000), nil)))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "batch", Role: "batch"}))
	must(t, c.a.AddFramework(FrameworkInfo{ID: "prod", Role: "prod"}))
	c.run(t, "prod", "a3", cpus(500), 2, false)
	c.run(t, "batch", "a3", cpus(1000), 1, false)
	must(t, c.a.SetRoleGuarantee("prod", cpus(1500)))
	must(t, c.a.SetRoleGuarantee("qa", cpus(500)))
	demand(t, c.a, "prod", Demand{Resources: cpus(1000), Count: 1})
	demand(t, c.a, "batch", Demand{Resources: cpus(500), Count: Unlimited})

	plan := c.a.PlanPreemption(c.tasks, at(0))
	if len(plan.Preempt) != 0 {
		t.Fatalf("plan took %+v, want free room counted", plan.Preempt)
	}
	d := c.a.Allocate(at(1))
	if !offeredTo(d, "prod", "a2") {
		t.Fatalf("prod was not offered a2: %+v", d.Offers)
	}
	if offeredTo(d, "batch", "a1") {
		t.Fatalf("batch was offered a1, the headroom prod's task needs: %+v", d.Offers)
	}
}

// offeredTo reports whether d offers agent's room to fw.
func offeredTo(d Decisions, fw protocol.FrameworkID, agent protocol.AgentID) bool {
	for _, o := range d.Offers {
		if o.FrameworkID == fw && o.AgentID == agent {
			return true
		}
	}
	return false
}
