package altruism

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Random DAG jobs for property tests, and a driver that runs a job against
// its plans with exact estimates: every task finishes exactly its stage's
// duration after it starts.

var propStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// randomSpec returns a random acyclic job of 1 to 6 stages with 1 to 8
// tasks each over cpus and mem, listed in shuffled order, and a share. The
// share fits every task unless feasible is false, in which case it is
// smaller than some task.
func randomSpec(rng *rand.Rand, feasible bool) (JobSpec, protocol.Resources) {
	n := 1 + rng.IntN(6)
	stages := make([]StageSpec, n)
	var maxCPU, maxMem, sumCPU, sumMem int64
	for i := range stages {
		c := int64(100 * (1 + rng.IntN(20)))
		m := int64(256 * rng.IntN(17)) // sometimes 0: a stage that needs no mem
		tasks := 1 + rng.IntN(8)
		stages[i] = StageSpec{
			Name:     fmt.Sprintf("s%d", i),
			Tasks:    tasks,
			Demand:   protocol.Scalars(map[string]int64{"cpus": c, "mem": m}),
			Duration: time.Duration(1+rng.IntN(40)) * 125 * time.Millisecond,
		}
		for p := range i {
			if rng.IntN(100) < 35 {
				stages[i].Parents = append(stages[i].Parents, fmt.Sprintf("s%d", p))
			}
		}
		maxCPU, maxMem = max(maxCPU, c), max(maxMem, m)
		sumCPU += c * int64(tasks)
		sumMem += m * int64(tasks)
	}
	rng.Shuffle(len(stages), func(a, b int) { stages[a], stages[b] = stages[b], stages[a] })
	share := protocol.Scalars(map[string]int64{
		"cpus": maxCPU + rng.Int64N(sumCPU-maxCPU+1),
		"mem":  maxMem + rng.Int64N(sumMem-maxMem+1),
		"gpus": 2, // a resource no task asks for: it is all leftover
	})
	if !feasible {
		share.Scalars["cpus"] = maxCPU - 1
	}
	return JobSpec{Stages: stages}, share
}

func newRandomJob(t testing.TB, rng *rand.Rand, feasible bool) (*Job, JobSpec, protocol.Resources) {
	t.Helper()
	spec, share := randomSpec(rng, feasible)
	j, err := NewJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.ShareChanged(share); err != nil {
		t.Fatal(err)
	}
	return j, spec, share
}

// driver runs a job against its plans.
type driver struct {
	t   testing.TB
	p   *Planner
	j   *Job
	rng *rand.Rand
	// draw returns the P(altruism) draw of each plan; nil means 0.
	draw func() float64
	// early is the probability that an optional task starts right away, as
	// if granted leftover.
	early float64
	// fail is the probability that a task fails when it would finish.
	fail float64
	// check, if set, inspects every plan before it is followed.
	check func(now time.Time, d Decision)
	// stuckOK lets run return when nothing can happen any more (a share too
	// small for the next task) instead of failing the test.
	stuckOK bool
	now     time.Time
	plans   []Decision
	// planTime is the wall time spent in Plan, for benchmarks.
	planTime time.Duration
}

// plan plans at the current time, checks the plan and starts its
// must-start tasks, and optional ones with probability early.
func (dr *driver) plan() Decision {
	draw := 0.0
	if dr.draw != nil {
		draw = dr.draw()
	}
	began := time.Now()
	d := mustPlan(dr.t, dr.p, dr.j, dr.now, draw)
	dr.planTime += time.Since(began)
	if dr.check != nil {
		dr.check(dr.now, d)
	}
	dr.plans = append(dr.plans, d)
	for _, id := range d.MustStart {
		dr.start(id)
	}
	for _, id := range d.Optional {
		if dr.early > 0 && dr.rng.Float64() < dr.early {
			dr.start(id)
		}
	}
	return d
}

func (dr *driver) start(id TaskID) {
	dr.t.Helper()
	if err := dr.j.TaskStarted(id, dr.now); err != nil {
		dr.t.Fatal(err)
	}
}

// nextEnd returns the earliest end of a running task, or the zero time.
func (dr *driver) nextEnd() time.Time {
	var next time.Time
	for _, ti := range dr.j.Tasks() {
		if ti.State != Running {
			continue
		}
		_, dur, _ := dr.j.Estimate(ti.ID.Stage)
		if end := ti.Start.Add(dur); next.IsZero() || end.Before(next) {
			next = end
		}
	}
	return next
}

// advance moves to the next task end or plan timer, whichever is first, and
// finishes (or fails) the tasks that end then. It reports false when
// nothing is left to wait for.
func (dr *driver) advance(d Decision) bool {
	next := dr.nextEnd()
	if !d.NextReplan.IsZero() && (next.IsZero() || d.NextReplan.Before(next)) {
		next = d.NextReplan
	}
	if next.IsZero() {
		return false
	}
	if next.Before(dr.now) {
		dr.t.Fatalf("time went back from %v to %v", dr.now, next)
	}
	dr.now = next
	for _, ti := range dr.j.Tasks() {
		if ti.State != Running {
			continue
		}
		_, dur, _ := dr.j.Estimate(ti.ID.Stage)
		if ti.Start.Add(dur).After(dr.now) {
			continue
		}
		var err error
		if dr.fail > 0 && dr.rng.Float64() < dr.fail {
			err = dr.j.TaskFailed(ti.ID, dr.now)
		} else {
			err = dr.j.TaskFinished(ti.ID, dr.now)
		}
		if err != nil {
			dr.t.Fatal(err)
		}
	}
	return true
}

// run plans and advances until the job is done, at most maxPlans plans
// (0: no limit), and returns whether it is done.
func (dr *driver) run(maxPlans int) bool {
	dr.t.Helper()
	for n := 0; maxPlans == 0 || n < maxPlans; n++ {
		if dr.j.Done() {
			return true
		}
		if n > 10000 {
			dr.t.Fatal("job did not finish within 10000 plans")
		}
		d := dr.plan()
		if !dr.advance(d) {
			if !dr.j.Done() && !dr.stuckOK {
				dr.t.Fatalf("stuck at %v: nothing runs, no plan timer, job not done", dr.now.Sub(propStart))
			}
			return dr.j.Done()
		}
	}
	return dr.j.Done()
}

// midRun returns a driver whose job has been run for a random number of
// plans with random altruism and some early starts, then moved to a random
// instant before its next task end, so that running tasks are part-way
// through. The job may also be done already.
func midRun(t testing.TB, rng *rand.Rand, j *Job) *driver {
	t.Helper()
	dr := &driver{t: t, p: mustPlanner(t, DefaultConfig()), j: j, rng: rng, now: propStart,
		draw: rng.Float64, early: 0.2 * rng.Float64(), stuckOK: true}
	dr.run(rng.IntN(8))
	if next := dr.nextEnd(); !next.IsZero() {
		dr.now = dr.now.Add(time.Duration(rng.Int64N(int64(next.Sub(dr.now)))))
	}
	return dr
}

// usage sums the demand of the running tasks and of extra tasks.
func usage(t testing.TB, j *Job, extra []TaskID) protocol.Resources {
	t.Helper()
	var out protocol.Resources
	add := func(stage string) {
		r, _, err := j.Estimate(stage)
		if err != nil {
			t.Fatal(err)
		}
		out.AddInPlace(r)
	}
	for _, ti := range j.Tasks() {
		if ti.State == Running {
			add(ti.ID.Stage)
		}
	}
	for _, id := range extra {
		add(id.Stage)
	}
	return out
}

// runnable lists the job's unstarted tasks whose parent stages are done.
func runnable(j *Job) []TaskID {
	var out []TaskID
	for _, ti := range j.Tasks() {
		if ti.Runnable && (ti.State == Pending || ti.State == Failed) {
			out = append(out, ti.ID)
		}
	}
	return out
}

func sortedIDs(ids []TaskID) []TaskID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b TaskID) int {
		if a.Stage != b.Stage {
			if a.Stage < b.Stage {
				return -1
			}
			return 1
		}
		return a.Index - b.Index
	})
	return out
}
