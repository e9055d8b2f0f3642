package phoenix

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// smallConfig is a quick configuration: a few hundred workers and jobs.
func smallConfig(trace, scheduler string, seed uint64) Config {
	c := DefaultConfig()
	c.Trace, c.Scheduler, c.Seed = trace, scheduler, seed
	c.Workers, c.Jobs = 200, 600
	return c
}

// mustRun runs cfg and returns the simulator, for its jobs and counters.
func mustRun(t *testing.T, cfg Config) *engine {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := newEngine(cfg.resolved())
	s.run()
	return s
}

// finishTimes lists every job's finish time (-1 if rejected).
func finishTimes(s *engine) []float64 {
	out := make([]float64, len(s.jobs))
	for i, j := range s.jobs {
		out[i] = j.finish
		if j.reject {
			out[i] = -1
		}
	}
	return out
}

// Invariant 1: no task starts on a worker breaking one of its hard
// constraints, in any run; every job finishes.
func TestPhoenix_hardConstraintsNeverViolated(t *testing.T) {
	for _, trace := range Traces() {
		for _, sched := range []string{SchedHawkC, SchedEagleC, SchedYaqD, SchedPhoenix} {
			for seed := uint64(1); seed <= 2; seed++ {
				s := mustRun(t, smallConfig(trace, sched, seed))
				if s.violations != 0 {
					t.Fatalf("%s %s seed %d: %d hard-constraint violations", trace, sched, seed, s.violations)
				}
				if s.guardBreaches != 0 {
					t.Fatalf("%s %s seed %d: %d guard breaches", trace, sched, seed, s.guardBreaches)
				}
				constrained := 0
				for _, j := range s.jobs {
					if !j.reject && j.done != j.tasks() {
						t.Fatalf("%s %s: job %d ran %d of %d tasks", trace, sched, j.id, j.done, j.tasks())
					}
					if len(j.hard) > 0 {
						constrained++
					}
				}
				if constrained == 0 {
					t.Fatalf("%s %s: no job has a hard constraint", trace, sched)
				}
			}
		}
	}
}

// The violation counter does count: eagle (which ignores constraints)
// samples constrained jobs from every worker, and a task started against
// its constraint is counted once.
func TestPhoenix_violationCounterCounts(t *testing.T) {
	s := mustRun(t, smallConfig("google", SchedEagle, 1))
	bad := 0
	for _, j := range s.jobs {
		if len(j.hard) > 0 && len(j.sig.all) == len(s.workers) {
			bad++
		}
	}
	if bad == 0 {
		t.Fatal("eagle filtered constraints")
	}
	s = newEngine(smallConfig("google", SchedEagleC, 1).resolved())
	j := &job{spec: &jobSpec{durs: []float64{1}, est: 1},
		hard: []protocol.Constraint{{Attribute: "arch", Op: protocol.OpEq, Value: "sparc"}}}
	s.getTask(0, &reservation{job: j, est: 1})
	if s.violations != 1 {
		t.Fatalf("violations %d after starting a task against its constraint, want 1", s.violations)
	}
}

// Invariant 3: with reordering, negotiation, preference sampling and
// partition shaping off, Phoenix makes Eagle-C's decisions exactly.
func TestPhoenix_switchesOffIsEagleC(t *testing.T) {
	for _, trace := range Traces() {
		off := smallConfig(trace, SchedPhoenix, 3)
		off.NoReorder, off.NoNegotiate, off.NoPrefer, off.NoPartition = true, true, true, true
		got := finishTimes(mustRun(t, off))
		want := finishTimes(mustRun(t, smallConfig(trace, SchedEagleC, 3)))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Phoenix with every switch off differs from Eagle-C", trace)
		}
		on := finishTimes(mustRun(t, smallConfig(trace, SchedPhoenix, 3)))
		if trace == "google" && slices.Equal(on, want) {
			t.Fatalf("%s: Phoenix with its switches on made Eagle-C's decisions exactly; the test shows nothing", trace)
		}
	}
}

// Invariant 4: without constraints in the workload, Phoenix is Eagle.
func TestPhoenix_noConstraintsIsEagle(t *testing.T) {
	for _, trace := range Traces() {
		ph := smallConfig(trace, SchedPhoenix, 4)
		ph.Constrained = 0
		eg := ph
		eg.Scheduler = SchedEagle
		if got, want := finishTimes(mustRun(t, ph)), finishTimes(mustRun(t, eg)); !slices.Equal(got, want) {
			t.Fatalf("%s: Phoenix without constraints differs from Eagle", trace)
		}
	}
}

// Invariant 6: demand returns to 0 when the trace drains, and supply is
// the class bitset's popcount (one slot per worker).
func TestPhoenix_demandDrainsSupplyIsPopcount(t *testing.T) {
	s := mustRun(t, smallConfig("cloudera", SchedPhoenix, 5))
	if len(s.ix.classes) == 0 {
		t.Fatal("no constraint class was seen")
	}
	for _, k := range s.ix.classes {
		if k.load.Demand != 0 {
			t.Errorf("%s: demand %d after the trace drained", k.key, k.load.Demand)
		}
		n := 0
		for w, a := range s.ix.attrs {
			ok, _ := k.c.Matches(a)
			if ok != k.bits.has(w) {
				t.Fatalf("%s: bitset disagrees with the constraint on worker %d", k.key, w)
			}
			if ok {
				n++
			}
		}
		if k.load.Supply != int64(n) || k.load.Supply != int64(k.bits.count()) {
			t.Errorf("%s: supply %d, popcount %d, satisfying workers %d", k.key, k.load.Supply, k.bits.count(), n)
		}
	}
	if s.crv.all.load.Demand != 0 {
		t.Errorf("total demand %d after the trace drained", s.crv.all.load.Demand)
	}
}

// Invariant 7: with exponential service (E[S²] = 2E[S]²) the wait estimate
// is the M/M/1 result rho/(1-rho)·E[S].
func TestPhoenix_waitEstimateMM1(t *testing.T) {
	for _, tc := range []struct{ lam, m1, s float64 }{{0.5, 1, 1}, {3, 2, 10}, {80, 10, 1000}, {0.01, 50, 1}} {
		got := waitEstimate(tc.lam, tc.m1, 2*tc.m1*tc.m1, tc.s, 0, math.Inf(1))
		rho := tc.lam / tc.s * tc.m1
		want := rho / (1 - rho) * tc.m1
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("lam %v m1 %v s %v: W %v, want %v", tc.lam, tc.m1, tc.s, got, want)
		}
	}
	// Saturated: the fluid estimate, capped.
	if got := waitEstimate(10, 1, 2, 10, 500, math.Inf(1)); got != 50 {
		t.Errorf("saturated W %v, want backlog/S = 50", got)
	}
	if got := waitEstimate(10, 1, 2, 10, 500, 20); got != 20 {
		t.Errorf("capped W %v, want 20", got)
	}
	if got := waitEstimate(1, 1, 2, 0, 0, 20); !math.IsInf(got, 1) {
		t.Errorf("no supply: W %v, want +Inf", got)
	}
}

// Invariant 8: a job whose hard constraints no worker satisfies is rejected
// and never probes.
func TestPhoenix_unsatisfiableRejected(t *testing.T) {
	for _, sched := range []string{SchedEagleC, SchedPhoenix, SchedHawkC, SchedYaqD} {
		s := newEngine(smallConfig("yahoo", sched, 1).resolved())
		j := &job{id: -1, spec: &jobSpec{durs: []float64{1, 1}, est: 1,
			cons: []protocol.Constraint{{Attribute: "arch", Op: protocol.OpEq, Value: "sparc"}}}}
		j.hard = j.spec.cons
		s.ev.Reset()
		s.arrive(j)
		if !j.reject {
			t.Fatalf("%s: unsatisfiable job admitted", sched)
		}
		if s.ev.Len() != 0 {
			t.Fatalf("%s: rejected job scheduled %d events", sched, s.ev.Len())
		}
	}
}

// Soft constraints that no worker satisfies together with the hard ones
// are relaxed, not fatal.
func TestPhoenix_infeasibleSoftRelaxed(t *testing.T) {
	s := newEngine(smallConfig("yahoo", SchedEagleC, 1).resolved())
	j := &job{spec: &jobSpec{durs: []float64{1}, est: 1, cons: []protocol.Constraint{
		{Attribute: "arch", Op: protocol.OpEq, Value: "arm64"},
		{Attribute: "eth_gbps", Op: protocol.OpGe, Value: "400", Soft: true}}}}
	j.hard = j.spec.cons[:1]
	if !s.admit(j) || len(j.relaxed) != 1 || len(j.classes) != 1 {
		t.Fatalf("admitted %v relaxed %v classes %v, want the soft constraint relaxed", !j.reject, j.relaxed, j.classes)
	}
}

// A run is a pure function of its configuration.
func TestPhoenix_deterministic(t *testing.T) {
	a, err := Run(smallConfig("google", SchedPhoenix, 9))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(smallConfig("google", SchedPhoenix, 9))
	if a != b {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.Short.N == 0 || a.Long.N == 0 || a.Constrained.N == 0 || a.Unconstrained.N == 0 {
		t.Fatalf("empty class: %+v", a)
	}
	if !(a.Short.P50 <= a.Short.P90 && a.Short.P90 <= a.Short.P99) {
		t.Fatalf("percentiles out of order: %+v", a.Short)
	}
}

// Hawk-C, with FIFO queues and no SSS, is slower than Eagle-C for short
// jobs; the comparison reports factors against the first scheduler.
func TestPhoenix_compare(t *testing.T) {
	r := &Runner{}
	calls := 0
	r.Progress = func(done, total int) { calls++ }
	c, err := Compare(r, smallConfig("yahoo", "", 1), []string{SchedEagleC, SchedHawkC}, []uint64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 {
		t.Fatalf("progress called %d times, want 4", calls)
	}
	if f := c.Rows[0].ShortFactor; f != (Factors{1, 1, 1}) {
		t.Fatalf("first row's factors %+v, want 1", f)
	}
	if f := c.Rows[1].ShortFactor.P90; f >= 1 {
		t.Fatalf("Hawk-C short p90 factor %v, want below 1", f)
	}
	if _, err := Compare(r, smallConfig("nope", "", 1), []string{SchedEagleC}, []uint64{1}); !errors.Is(err, ErrBadSimulation) {
		t.Fatalf("bad trace: %v", err)
	}
}

func TestPhoenix_validate(t *testing.T) {
	for _, c := range []Config{
		{Trace: "x", Scheduler: SchedEagle, Workers: 100, Jobs: 10},
		{Trace: "google", Scheduler: "x", Workers: 100, Jobs: 10},
		{Trace: "google", Scheduler: SchedEagle, Workers: 1, Jobs: 10},
		{Trace: "google", Scheduler: SchedEagle, Workers: 100, Jobs: 0},
		{Trace: "google", Scheduler: SchedEagle, Workers: 100, Jobs: 10, Load: 3},
		{Trace: "google", Scheduler: SchedEagle, Workers: 100, Jobs: 10, Constrained: 2},
	} {
		if err := c.Validate(); !errors.Is(err, ErrBadSimulation) {
			t.Errorf("%+v: %v, want ErrBadSimulation", c, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
