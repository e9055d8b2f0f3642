package sim

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// pxSmall is a quick configuration: a few hundred workers and jobs.
func pxSmall(trace, scheduler string, seed uint64) PhoenixConfig {
	c := DefaultPhoenixConfig()
	c.Trace, c.Scheduler, c.Seed = trace, scheduler, seed
	c.Workers, c.Jobs = 200, 600
	return c
}

// pxRun runs cfg and returns the simulator, for its jobs and counters.
func pxRun(t *testing.T, cfg PhoenixConfig) *pxSim {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := newPxSim(cfg.resolved())
	s.run()
	return s
}

// pxFinishes lists every job's finish time (-1 if rejected).
func pxFinishes(s *pxSim) []float64 {
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
	for _, trace := range PhoenixTraces() {
		for _, sched := range []string{PhoenixHawkC, PhoenixEagleC, PhoenixYaqD, PhoenixPhoenix} {
			for seed := uint64(1); seed <= 2; seed++ {
				s := pxRun(t, pxSmall(trace, sched, seed))
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
	s := pxRun(t, pxSmall("google", PhoenixEagle, 1))
	bad := 0
	for _, j := range s.jobs {
		if len(j.hard) > 0 && len(j.sig.all) == len(s.workers) {
			bad++
		}
	}
	if bad == 0 {
		t.Fatal("eagle filtered constraints")
	}
	s = newPxSim(pxSmall("google", PhoenixEagleC, 1).resolved())
	j := &pxJob{spec: &pxJobSpec{durs: []float64{1}, est: 1},
		hard: []protocol.Constraint{{Attribute: "arch", Op: protocol.OpEq, Value: "sparc"}}}
	s.getTask(0, &pxResv{job: j, est: 1})
	if s.violations != 1 {
		t.Fatalf("violations %d after starting a task against its constraint, want 1", s.violations)
	}
}

// Invariant 3: with reordering, negotiation, preference sampling and
// partition shaping off, Phoenix makes Eagle-C's decisions exactly.
func TestPhoenix_switchesOffIsEagleC(t *testing.T) {
	for _, trace := range PhoenixTraces() {
		off := pxSmall(trace, PhoenixPhoenix, 3)
		off.NoReorder, off.NoNegotiate, off.NoPrefer, off.NoPartition = true, true, true, true
		got := pxFinishes(pxRun(t, off))
		want := pxFinishes(pxRun(t, pxSmall(trace, PhoenixEagleC, 3)))
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Phoenix with every switch off differs from Eagle-C", trace)
		}
		on := pxFinishes(pxRun(t, pxSmall(trace, PhoenixPhoenix, 3)))
		if trace == "google" && slices.Equal(on, want) {
			t.Fatalf("%s: Phoenix with its switches on made Eagle-C's decisions exactly; the test shows nothing", trace)
		}
	}
}

// Invariant 4: without constraints in the workload, Phoenix is Eagle.
func TestPhoenix_noConstraintsIsEagle(t *testing.T) {
	for _, trace := range PhoenixTraces() {
		ph := pxSmall(trace, PhoenixPhoenix, 4)
		ph.Constrained = 0
		eg := ph
		eg.Scheduler = PhoenixEagle
		if got, want := pxFinishes(pxRun(t, ph)), pxFinishes(pxRun(t, eg)); !slices.Equal(got, want) {
			t.Fatalf("%s: Phoenix without constraints differs from Eagle", trace)
		}
	}
}

// Invariant 6: demand returns to 0 when the trace drains, and supply is
// the class bitset's popcount (one slot per worker).
func TestPhoenix_demandDrainsSupplyIsPopcount(t *testing.T) {
	s := pxRun(t, pxSmall("cloudera", PhoenixPhoenix, 5))
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
		got := pxWaitEstimate(tc.lam, tc.m1, 2*tc.m1*tc.m1, tc.s, 0, math.Inf(1))
		rho := tc.lam / tc.s * tc.m1
		want := rho / (1 - rho) * tc.m1
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("lam %v m1 %v s %v: W %v, want %v", tc.lam, tc.m1, tc.s, got, want)
		}
	}
	// Saturated: the fluid estimate, capped.
	if got := pxWaitEstimate(10, 1, 2, 10, 500, math.Inf(1)); got != 50 {
		t.Errorf("saturated W %v, want backlog/S = 50", got)
	}
	if got := pxWaitEstimate(10, 1, 2, 10, 500, 20); got != 20 {
		t.Errorf("capped W %v, want 20", got)
	}
	if got := pxWaitEstimate(1, 1, 2, 0, 0, 20); !math.IsInf(got, 1) {
		t.Errorf("no supply: W %v, want +Inf", got)
	}
}

// Invariant 8: a job whose hard constraints no worker satisfies is rejected
// and never probes.
func TestPhoenix_unsatisfiableRejected(t *testing.T) {
	for _, sched := range []string{PhoenixEagleC, PhoenixPhoenix, PhoenixHawkC, PhoenixYaqD} {
		s := newPxSim(pxSmall("yahoo", sched, 1).resolved())
		j := &pxJob{id: -1, spec: &pxJobSpec{durs: []float64{1, 1}, est: 1,
			cons: []protocol.Constraint{{Attribute: "arch", Op: protocol.OpEq, Value: "sparc"}}}}
		j.hard = j.spec.cons
		s.ev = s.ev[:0]
		s.arrive(j)
		if !j.reject {
			t.Fatalf("%s: unsatisfiable job admitted", sched)
		}
		if len(s.ev) != 0 {
			t.Fatalf("%s: rejected job scheduled %d events", sched, len(s.ev))
		}
	}
}

// Soft constraints that no worker satisfies together with the hard ones
// are relaxed, not fatal.
func TestPhoenix_infeasibleSoftRelaxed(t *testing.T) {
	s := newPxSim(pxSmall("yahoo", PhoenixEagleC, 1).resolved())
	j := &pxJob{spec: &pxJobSpec{durs: []float64{1}, est: 1, cons: []protocol.Constraint{
		{Attribute: "arch", Op: protocol.OpEq, Value: "arm64"},
		{Attribute: "eth_gbps", Op: protocol.OpGe, Value: "400", Soft: true}}}}
	j.hard = j.spec.cons[:1]
	if !s.admit(j) || len(j.relaxed) != 1 || len(j.classes) != 1 {
		t.Fatalf("admitted %v relaxed %v classes %v, want the soft constraint relaxed", !j.reject, j.relaxed, j.classes)
	}
}

// A run is a pure function of its configuration.
func TestPhoenix_deterministic(t *testing.T) {
	a, err := RunPhoenix(pxSmall("google", PhoenixPhoenix, 9))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunPhoenix(pxSmall("google", PhoenixPhoenix, 9))
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
	r := &PhoenixRunner{}
	calls := 0
	r.Progress = func(done, total int) { calls++ }
	c, err := ComparePhoenix(r, pxSmall("yahoo", "", 1), []string{PhoenixEagleC, PhoenixHawkC}, []uint64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 {
		t.Fatalf("progress called %d times, want 4", calls)
	}
	if f := c.Rows[0].ShortFactor; f != (PhoenixFactors{1, 1, 1}) {
		t.Fatalf("first row's factors %+v, want 1", f)
	}
	if f := c.Rows[1].ShortFactor.P90; f >= 1 {
		t.Fatalf("Hawk-C short p90 factor %v, want below 1", f)
	}
	if _, err := ComparePhoenix(r, pxSmall("nope", "", 1), []string{PhoenixEagleC}, []uint64{1}); !errors.Is(err, ErrBadPhoenix) {
		t.Fatalf("bad trace: %v", err)
	}
}

func TestPhoenix_validate(t *testing.T) {
	for _, c := range []PhoenixConfig{
		{Trace: "x", Scheduler: PhoenixEagle, Workers: 100, Jobs: 10},
		{Trace: "google", Scheduler: "x", Workers: 100, Jobs: 10},
		{Trace: "google", Scheduler: PhoenixEagle, Workers: 1, Jobs: 10},
		{Trace: "google", Scheduler: PhoenixEagle, Workers: 100, Jobs: 0},
		{Trace: "google", Scheduler: PhoenixEagle, Workers: 100, Jobs: 10, Load: 3},
		{Trace: "google", Scheduler: PhoenixEagle, Workers: 100, Jobs: 10, Constrained: 2},
	} {
		if err := c.Validate(); !errors.Is(err, ErrBadPhoenix) {
			t.Errorf("%+v: %v, want ErrBadPhoenix", c, err)
		}
	}
	if err := DefaultPhoenixConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
