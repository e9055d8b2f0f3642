package altruism

import (
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func TestPlan_InfeasibleShareIsGreedy(t *testing.T) {
	t.Parallel()
	// J1 of Figure 2 in a share of 0.2: S1 tasks (0.21) never fit, so there
	// is no T_k; the plan is greedy whatever P(altruism) says.
	j := fig2J1(t, 200)
	if err := j.ShareChanged(cpus(200)); err != nil {
		t.Fatal(err)
	}
	d := mustPlan(t, mustPlanner(t, DefaultConfig()), j, propStart, 0)
	if d.Feasible() || d.Completion != Never || !d.Deadline().IsZero() || d.Altruistic {
		t.Fatalf("got completion %v, altruistic %v; want Never, false", d.Completion, d.Altruistic)
	}
	wantIDs(t, "must", d.MustStart, []TaskID{{"S0", 0}, {"S0", 1}})
	wantIDs(t, "optional", d.Optional, []TaskID{{"S1", 0}, {"S1", 1}, {"S1", 2}})
	wantCPUs(t, "leftover", d.Leftover, 120)
	for _, tp := range d.Tasks {
		if tp.LatestStart != 0 {
			t.Fatalf("%v has latest start %v, want 0", tp.Task, tp.LatestStart)
		}
	}
	if !d.NextReplan.IsZero() {
		t.Fatalf("plan timer %v, want none", d.NextReplan)
	}
}

func TestPlan_ShareCutBelowRunning(t *testing.T) {
	t.Parallel()
	// J1 fills its share of 0.5 (the must-start S1 task plus three more, as
	// if on leftover), then the share is cut to 0.3: nothing may start until
	// enough of the running tasks finish, and nothing is left over.
	j := fig2J1(t, 200)
	p := mustPlanner(t, DefaultConfig())
	if err := j.ShareChanged(cpus(500)); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "must", mustPlan(t, p, j, propStart, 0).MustStart, []TaskID{{"S1", 0}})
	start(t, j, TaskID{"S1", 0}, propStart)
	for _, id := range []TaskID{{"S1", 1}, {"S0", 0}, {"S0", 1}} {
		start(t, j, id, propStart)
	}
	if err := j.ShareChanged(cpus(300)); err != nil {
		t.Fatal(err)
	}
	now := propStart.Add(500 * time.Millisecond)
	d := mustPlan(t, p, j, now, 0)
	if len(d.MustStart) != 0 {
		t.Fatalf("must-start %v while running tasks exceed the share", d.MustStart)
	}
	wantCPUs(t, "leftover", d.Leftover, 0)
	// Running tasks end at 0.5 from now; then S1/2 (0.21) runs for 1.0 and
	// S2 for 0.1.
	wantDur(t, "T_k", d.Completion, 1600*time.Millisecond)
	wantLatest(t, d, map[TaskID]time.Duration{{"S1", 2}: 500 * time.Millisecond, {"S2", 0}: 1500 * time.Millisecond})
}

func TestPlan_OverrunningTaskGetsFloor(t *testing.T) {
	t.Parallel()
	j := fig2J1(t, 200)
	if err := j.ShareChanged(cpus(1000)); err != nil {
		t.Fatal(err)
	}
	for _, ti := range j.Tasks() {
		if ti.Runnable {
			start(t, j, ti.ID, propStart)
		}
	}
	for _, ti := range j.Tasks() {
		if ti.State == Running && ti.ID != (TaskID{"S1", 2}) {
			if err := j.TaskFinished(ti.ID, propStart.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// S1/2 should have ended at 1.0; at 3.0 it still runs. It is planned to
	// end after ρ, then S2 takes 0.1.
	p := mustPlanner(t, Config{Altruism: 1, MinRemaining: 50 * time.Millisecond})
	d := mustPlan(t, p, j, propStart.Add(3*time.Second), 0)
	wantDur(t, "T_k", d.Completion, 150*time.Millisecond)
	wantLatest(t, d, map[TaskID]time.Duration{{"S2", 0}: 50 * time.Millisecond})
	wantFloat(t, "remaining work", d.RemainingWork, 0.15)
	wantFloat(t, "remaining work", p.RemainingWork(j, propStart.Add(3*time.Second)), 0.15)
}

func TestPlan_FailureReplans(t *testing.T) {
	t.Parallel()
	j := fig2J2(t)
	if err := j.ShareChanged(cpus(580)); err != nil {
		t.Fatal(err)
	}
	p := mustPlanner(t, DefaultConfig())
	d := mustPlan(t, p, j, propStart, 0)
	wantDur(t, "T_k", d.Completion, time.Second)
	wantIDs(t, "must", d.MustStart, []TaskID{{"S0", 0}, {"S0", 1}})
	for _, id := range d.MustStart {
		start(t, j, id, propStart)
	}
	failAt := propStart.Add(400 * time.Millisecond)
	if err := j.TaskFailed(TaskID{"S0", 1}, failAt); err != nil {
		t.Fatal(err)
	}
	// The failed task is a new task: it runs for a full 1.0 from now.
	d = mustPlan(t, p, j, failAt, 0)
	wantDur(t, "T_k after failure", d.Completion, time.Second)
	wantIDs(t, "must after failure", d.MustStart, []TaskID{{"S0", 1}})
	if ti, _ := j.Task(TaskID{"S0", 1}); ti.State != Failed || ti.Failures != 1 {
		t.Fatalf("failed task = %+v", ti)
	}
}

func TestPlan_OnlyRunningAndDone(t *testing.T) {
	t.Parallel()
	j := fig2J2(t)
	if err := j.ShareChanged(protocol.Scalars(map[string]int64{"cpus": 600, "mem": 64})); err != nil {
		t.Fatal(err)
	}
	p := mustPlanner(t, DefaultConfig())
	start(t, j, TaskID{"S0", 0}, propStart)
	start(t, j, TaskID{"S0", 1}, propStart)
	d := mustPlan(t, p, j, propStart.Add(250*time.Millisecond), 0)
	wantDur(t, "T_k", d.Completion, 750*time.Millisecond)
	if len(d.Tasks) != 0 || len(d.MustStart) != 0 || len(d.Optional) != 0 {
		t.Fatalf("plan has tasks: %+v", d)
	}
	if want := protocol.Scalars(map[string]int64{"cpus": 20, "mem": 64}); !d.Leftover.Equal(want) {
		t.Fatalf("leftover %v, want %v", d.Leftover, want)
	}
	for _, id := range []TaskID{{"S0", 0}, {"S0", 1}} {
		if err := j.TaskFinished(id, propStart.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	d = mustPlan(t, p, j, propStart.Add(time.Second), 0)
	if !j.Done() || d.Completion != 0 || d.RemainingWork != 0 || !d.Leftover.Equal(j.Share()) {
		t.Fatalf("done job: %+v", d)
	}
}

func TestPlan_UpdateEstimateReplans(t *testing.T) {
	t.Parallel()
	j := fig2J2(t)
	if err := j.ShareChanged(cpus(500)); err != nil {
		t.Fatal(err)
	}
	p := mustPlanner(t, DefaultConfig())
	wantDur(t, "T_k", mustPlan(t, p, j, propStart, 0).Completion, 2*time.Second)
	// Smaller tasks now fit side by side; the commitment's later deadline
	// does not hold the plan back.
	if err := j.UpdateEstimate("S0", cpus(250), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	d := mustPlan(t, p, j, propStart, 0)
	wantDur(t, "T_k", d.Completion, 3*time.Second)
	wantIDs(t, "must", d.MustStart, []TaskID{{"S0", 0}, {"S0", 1}})
	wantCPUs(t, "leftover", d.Leftover, 0)
}

func TestPlan_ZeroDemandStage(t *testing.T) {
	t.Parallel()
	j, err := NewJob(JobSpec{Stages: []StageSpec{
		{Name: "barrier", Tasks: 3, Duration: time.Second},
		{Name: "work", Tasks: 2, Demand: cpus(500), Duration: time.Second, Parents: []string{"barrier"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.ShareChanged(cpus(500)); err != nil {
		t.Fatal(err)
	}
	d := mustPlan(t, mustPlanner(t, DefaultConfig()), j, propStart, 0)
	wantDur(t, "T_k", d.Completion, 3*time.Second)
	wantIDs(t, "must", d.MustStart, []TaskID{{"barrier", 0}, {"barrier", 1}, {"barrier", 2}})
}

func TestPlan_CommitmentHoldsDeadline(t *testing.T) {
	t.Parallel()
	// The packers are heuristics: from a later state a fresh forward pack
	// can find a later completion than the schedule the job is following.
	// The commitment then keeps the earlier deadline. Count how often.
	held := 0
	for seed := range propSeeds {
		rng := seeded(seed)
		j, _, _ := newRandomJob(t, rng, true)
		fresh := mustPlanner(t, DefaultConfig())
		dr := &driver{t: t, p: mustPlanner(t, DefaultConfig()), j: j, rng: rng, now: propStart}
		dr.check = func(now time.Time, d Decision) {
			saved := j.commit
			j.commit = commitment{}
			f := mustPlan(t, fresh, j, now, 0)
			j.commit = saved
			if d.Completion > f.Completion {
				t.Fatalf("seed %d: kept %v over a fresh %v", seed, d.Completion, f.Completion)
			}
			if d.Completion < f.Completion {
				held++
			}
		}
		dr.run(0)
	}
	if held == 0 {
		t.Fatal("no plan needed its commitment; the property tests lose their teeth")
	}
	t.Logf("%d plans kept a deadline earlier than a fresh plan", held)
}

func TestDecision_Shapes(t *testing.T) {
	t.Parallel()
	j1, j2 := fig2J1(t, 210), fig2J2(t) // S2 asks for what S1 asks for
	for _, j := range []*Job{j1, j2} {
		if err := j.ShareChanged(cpus(500)); err != nil {
			t.Fatal(err)
		}
	}
	p := mustPlanner(t, DefaultConfig())
	d1 := mustPlan(t, p, j1, propStart, 0)
	d2 := mustPlan(t, p, j2, propStart, 0)
	constrained := protocol.TaskShape{Resources: cpus(210), Count: 4,
		Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r1"}}}
	req := protocol.DemandRequest{FrameworkID: "fw", MustStart: []protocol.TaskShape{constrained}, RemainingWork: 1}
	d1.AddTo(&req)
	d2.AddTo(&req)
	d2.AddTo(&req) // as if a second job like J2: its shapes merge
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	wantShapes(t, "must", req.MustStart[1:], map[int64]int64{210: 1, 290: 2})
	wantShapes(t, "optional", req.Optional, map[int64]int64{210: 2, 40: 2, 290: 2})
	wantShapes(t, "demand", req.Demand, map[int64]int64{210: 3, 40: 2, 290: 4})
	if req.MustStart[0].Count != 4 {
		t.Fatalf("constrained shape merged: %+v", req.MustStart[0])
	}
	wantFloat(t, "remaining work", req.RemainingWork, 1+5.1+2+2)
	if got := d1.MustStartShapes(); len(got) != 1 || got[0].Count != 1 || !got[0].Resources.Equal(cpus(210)) {
		t.Fatalf("J1 must shapes = %+v", got)
	}
}

// Internal invariants of the packers over random states: the forward pack,
// used unverified, is valid; right-justifying it keeps it valid and never
// moves a task earlier.
func TestPackers_ForwardAndJustifiedAreValid(t *testing.T) {
	t.Parallel()
	for seed := range propSeeds {
		rng := seeded(seed)
		j, _, _ := newRandomJob(t, rng, true)
		dr := midRun(t, rng, j)
		p := mustPlanner(t, DefaultConfig())
		p.prepare(j, dr.now)
		if !p.forward(j) {
			t.Fatalf("seed %d: forward pack failed in a feasible share", seed)
		}
		p.fwd.normalize()
		if !p.verify(j, &p.fwd) {
			t.Fatalf("seed %d: forward schedule invalid: %+v", seed, p.fwd)
		}
		p.justify(j, &p.fwd)
		if !p.verify(j, &p.jus) {
			t.Fatalf("seed %d: justified schedule invalid: %+v", seed, p.jus)
		}
		if p.jus.horizon != p.fwd.horizon || sumStarts(&p.jus) < sumStarts(&p.fwd) {
			t.Fatalf("seed %d: justification moved work earlier", seed)
		}
	}
}

func sumStarts(s *schedule) int64 {
	var n int64
	for _, sl := range s.slots {
		n += sl.start * int64(sl.count)
	}
	return n
}
