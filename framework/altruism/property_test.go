package altruism

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

const propSeeds = 300

func seeded(seed int) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0xa17)) }

// checkPlanInvariants checks what must hold of every plan: must-start tasks
// are runnable and fit next to the running tasks (or none start when running
// tasks already exceed the share), and the leftover is the share minus
// running and must-start demand, clamped at zero.
func checkPlanInvariants(t testing.TB, j *Job, d Decision) {
	t.Helper()
	share := j.Share()
	running := usage(t, j, nil)
	withMust := usage(t, j, d.MustStart)
	if len(d.MustStart) > 0 && !share.Contains(withMust) {
		t.Fatalf("running + must-start = %v exceeds share %v", withMust, share)
	}
	run := runnable(j)
	for _, id := range d.MustStart {
		if !slices.Contains(run, id) {
			t.Fatalf("must-start %v is not runnable", id)
		}
	}
	if got, want := sortedIDs(append(slices.Clone(d.MustStart), d.Optional...)), sortedIDs(run); !slices.Equal(got, want) {
		t.Fatalf("must-start + optional = %v, runnable = %v", got, want)
	}
	wantLeft := protocol.Resources{}
	for name, v := range share.Scalars {
		if left := v - withMust.Scalar(name); left > 0 {
			wantLeft.AddInPlace(protocol.Scalars(map[string]int64{name: left}))
		}
	}
	for name, v := range d.Leftover.Scalars {
		if v < 0 {
			t.Fatalf("leftover %s = %d < 0", name, v)
		}
	}
	if !d.Leftover.Equal(wantLeft) {
		t.Fatalf("leftover = %v, want %v (share %v, running %v)", d.Leftover, wantLeft, share, running)
	}
}

// checkFollowable checks, independently of the planner, that starting every
// unstarted task exactly at its latest start is a schedule the job can run
// in its share: none starts before its parent stages finish, every task ends
// by the deadline, and whenever a planned task runs, all tasks together fit.
func checkFollowable(t testing.TB, j *Job, spec JobSpec, d Decision, floor time.Duration) {
	t.Helper()
	if !d.Feasible() {
		return
	}
	type span struct {
		stage      string
		start, end time.Time
		need       protocol.Resources
		planned    bool
	}
	var spans []span
	for _, ti := range j.Tasks() {
		need, dur, _ := j.Estimate(ti.ID.Stage)
		if ti.State == Running {
			rem := max(dur-max(d.At.Sub(ti.Start), 0), floor)
			spans = append(spans, span{ti.ID.Stage, d.At, d.At.Add(rem), need, false})
		}
	}
	for _, tp := range d.Tasks {
		_, dur, _ := j.Estimate(tp.Task.Stage)
		if tp.LatestStart < 0 {
			t.Fatalf("%v has latest start %v < 0", tp.Task, tp.LatestStart)
		}
		s := d.At.Add(tp.LatestStart)
		spans = append(spans, span{tp.Task.Stage, s, s.Add(dur), tp.Demand, true})
	}
	parents := map[string][]string{}
	for _, st := range spec.Stages {
		parents[st.Name] = st.Parents
	}
	for _, a := range spans {
		if a.end.After(d.Deadline()) {
			t.Fatalf("%s task ends at %v, after the deadline %v", a.stage, a.end.Sub(d.At), d.Completion)
		}
		if !a.planned {
			continue
		}
		for _, b := range spans {
			if slices.Contains(parents[a.stage], b.stage) && b.end.After(a.start) {
				t.Fatalf("%s task starts at %v before its parent %s ends at %v",
					a.stage, a.start.Sub(d.At), b.stage, b.end.Sub(d.At))
			}
		}
		// Usage is highest just after some start; check at every start
		// inside a planned task's run.
		for _, x := range spans {
			if x.start.Before(a.start) || !x.start.Before(a.end) {
				continue
			}
			var total protocol.Resources
			for _, b := range spans {
				if !b.start.After(x.start) && b.end.After(x.start) {
					total.AddInPlace(b.need)
				}
			}
			if !j.Share().Contains(total) {
				t.Fatalf("at %v usage %v exceeds share %v", x.start.Sub(d.At), total, j.Share())
			}
		}
	}
}

func TestPlan_InvariantsFromRandomStates(t *testing.T) {
	t.Parallel()
	for seed := range propSeeds {
		rng := seeded(seed)
		j, spec, _ := newRandomJob(t, rng, rng.IntN(10) > 0)
		dr := midRun(t, rng, j)
		p := mustPlanner(t, Config{Altruism: rng.Float64(), MinRemaining: DefaultMinRemaining})
		for range 3 {
			d := mustPlan(t, p, j, dr.now, rng.Float64())
			checkPlanInvariants(t, j, d)
			checkFollowable(t, j, spec, d, DefaultMinRemaining)
		}
	}
}

func TestPlan_FollowingThePlanMeetsCompletion(t *testing.T) {
	t.Parallel()
	// Closed loop from the start: plan after every event, start exactly the
	// must-start tasks, never anything early. With a constant share and
	// exact estimates the job finishes by the first plan's deadline, and no
	// re-plan moves the deadline later.
	for seed := range propSeeds {
		rng := seeded(seed)
		j, spec, _ := newRandomJob(t, rng, true)
		var deadline time.Time
		dr := &driver{t: t, p: mustPlanner(t, DefaultConfig()), j: j, rng: rng, now: propStart}
		dr.check = func(now time.Time, d Decision) {
			checkPlanInvariants(t, j, d)
			checkFollowable(t, j, spec, d, DefaultMinRemaining)
			if !d.Feasible() {
				t.Fatalf("seed %d: feasible share gave no completion time", seed)
			}
			if !deadline.IsZero() && d.Deadline().After(deadline) {
				t.Fatalf("seed %d: at %v the deadline moved from %v to %v",
					seed, now.Sub(propStart), deadline.Sub(propStart), d.Deadline().Sub(propStart))
			}
			deadline = d.Deadline()
		}
		if !dr.run(0) {
			t.Fatalf("seed %d: job not done", seed)
		}
		first := dr.plans[0].Deadline()
		if dr.now.After(first) {
			t.Fatalf("seed %d: finished at %v, after T_k = %v", seed, dr.now.Sub(propStart), dr.plans[0].Completion)
		}
	}
}

func TestPlan_FollowingThePlanFromRandomStates(t *testing.T) {
	t.Parallel()
	// The same from arbitrary states: after random altruism, early starts
	// on leftover and tasks part-way through.
	for seed := range propSeeds {
		rng := seeded(seed)
		j, spec, _ := newRandomJob(t, rng, true)
		dr := midRun(t, rng, j)
		if j.Done() {
			continue
		}
		dr.draw, dr.early = nil, 0
		dr.p = mustPlanner(t, DefaultConfig())
		var deadline time.Time
		dr.check = func(now time.Time, d Decision) {
			checkPlanInvariants(t, j, d)
			checkFollowable(t, j, spec, d, DefaultMinRemaining)
			if !deadline.IsZero() && d.Deadline().After(deadline) {
				t.Fatalf("seed %d: deadline moved from %v to %v", seed, deadline.Sub(propStart), d.Deadline().Sub(propStart))
			}
			deadline = d.Deadline()
		}
		dr.plans = nil
		if !dr.run(0) {
			t.Fatalf("seed %d: job not done", seed)
		}
		if dr.now.After(dr.plans[0].Deadline()) {
			t.Fatalf("seed %d: finished at %v, after the deadline %v", seed, dr.now, dr.plans[0].Deadline())
		}
	}
}

func TestPlan_GreedyStartsEverythingThatFits(t *testing.T) {
	t.Parallel()
	// With P(altruism) = 0 every runnable task that fits next to the running
	// ones is must-start: nothing optional would still fit, and when the
	// share holds every runnable task, all of them are must-start.
	for seed := range propSeeds {
		rng := seeded(seed)
		j, _, _ := newRandomJob(t, rng, rng.IntN(10) > 0)
		dr := midRun(t, rng, j)
		p := mustPlanner(t, Config{Altruism: 0, MinRemaining: DefaultMinRemaining})
		d := mustPlan(t, p, j, dr.now, rng.Float64())
		if d.Altruistic {
			t.Fatalf("seed %d: P = 0 gave an altruistic plan", seed)
		}
		checkPlanInvariants(t, j, d)
		withMust := usage(t, j, d.MustStart)
		for _, id := range d.Optional {
			if j.Share().Contains(usage(t, j, append(slices.Clone(d.MustStart), id))) {
				t.Fatalf("seed %d: optional %v fits next to %v in %v", seed, id, withMust, j.Share())
			}
		}
		if j.Share().Contains(usage(t, j, runnable(j))) && len(d.Optional) > 0 {
			t.Fatalf("seed %d: share holds every runnable task, yet %v are optional", seed, d.Optional)
		}
	}
}

func TestPlan_GreedyJobFlag(t *testing.T) {
	t.Parallel()
	rng := seeded(1)
	spec, share := randomSpec(rng, true)
	spec.Greedy = true
	j, err := NewJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.ShareChanged(share); err != nil {
		t.Fatal(err)
	}
	d := mustPlan(t, mustPlanner(t, DefaultConfig()), j, propStart, 0)
	if d.Altruistic {
		t.Fatal("a Greedy job planned altruistically")
	}
}

func TestPlan_RandomAltruismFailuresAndShareChanges(t *testing.T) {
	t.Parallel()
	// Whatever happens (random draws, early starts, failures, share cuts
	// and raises), every plan keeps its invariants and the job finishes.
	for seed := range propSeeds {
		rng := seeded(seed)
		j, spec, share := newRandomJob(t, rng, true)
		dr := &driver{t: t, p: mustPlanner(t, Config{Altruism: 0.7, MinRemaining: DefaultMinRemaining}), j: j,
			rng: rng, now: propStart, draw: rng.Float64, early: 0.1, fail: 0.1}
		dr.check = func(now time.Time, d Decision) {
			checkPlanInvariants(t, j, d)
			checkFollowable(t, j, spec, d, DefaultMinRemaining)
		}
		for n := 0; !j.Done(); n++ {
			if n > 5000 {
				t.Fatalf("seed %d: job did not finish", seed)
			}
			if rng.IntN(8) == 0 {
				scaled := share.Clone()
				scaled.Scalars["cpus"] = share.Scalars["cpus"] * int64(50+rng.IntN(100)) / 100
				scaled.Scalars["cpus"] = max(scaled.Scalars["cpus"], share.Scalars["cpus"]/2)
				if rng.IntN(2) == 0 {
					scaled = share // back to the full share, which fits every task
				}
				if err := j.ShareChanged(scaled); err != nil {
					t.Fatal(err)
				}
			}
			d := dr.plan()
			if !dr.advance(d) && !j.Done() {
				// Stuck behind a share too small for the next task: restore it.
				if err := j.ShareChanged(share); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestPlan_Deterministic(t *testing.T) {
	t.Parallel()
	// Two planners (one with used scratch space) agree, and planning twice
	// at the same instant gives the same decision.
	used := mustPlanner(t, DefaultConfig())
	for seed := range 100 {
		rng := seeded(seed)
		j, _, _ := newRandomJob(t, rng, rng.IntN(10) > 0)
		dr := midRun(t, rng, j)
		draw := rng.Float64()
		a := mustPlan(t, used, j, dr.now, draw)
		b := mustPlan(t, mustPlanner(t, DefaultConfig()), j, dr.now, draw)
		c := mustPlan(t, used, j, dr.now, draw)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, c) {
			t.Fatalf("seed %d: plans differ:\n%+v\n%+v\n%+v", seed, a, b, c)
		}
	}
}
