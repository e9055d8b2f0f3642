package phoenix

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/allot-project/allot/offers"
)

// queueFixture is a simulator with two classes and no cluster, for queue
// decisions alone.
func queueFixture(t *testing.T, scheduler string, loads ...offers.ClassLoad) *engine {
	t.Helper()
	s := &engine{pol: policyFor(Config{Scheduler: scheduler}), ix: &classIndex{}}
	for i, l := range loads {
		s.ix.classes = append(s.ix.classes, &constraintClass{id: i, load: l})
	}
	s.crv = &crvTracker{s: s, h: offers.DefaultHysteresis()}
	for _, k := range s.ix.classes {
		k.load.Update(s.crv.h)
	}
	return s
}

func reservationFor(est, remain float64, enq uint64, classes ...int) *reservation {
	j := &job{classes: classes, remain: remain}
	return &reservation{job: j, est: est, enq: enq}
}

// The worked example of docs/phoenix.md, with its exact numbers.
func TestPhoenixQueue_workedExample(t *testing.T) {
	eth := offers.ClassLoad{Demand: 6, Supply: 4}  // r = 1.5
	arch := offers.ClassLoad{Demand: 5, Supply: 8} // r = 0.625
	ph := queueFixture(t, SchedPhoenix, eth, arch)
	if r := ph.ix.classes[0].load.Ratio(); r != 1.5 || !ph.ix.classes[0].load.Contended {
		t.Fatalf("eth: ratio %v contended %v, want 1.5 and contended", r, ph.ix.classes[0].load.Contended)
	}
	if r := ph.ix.classes[1].load.Ratio(); r != 0.625 || ph.ix.classes[1].load.Contended {
		t.Fatalf("arch: ratio %v contended %v, want 0.625 and not contended", r, ph.ix.classes[1].load.Contended)
	}
	queue := func() []*reservation {
		return []*reservation{reservationFor(10, 20, 1), reservationFor(5, 5, 2, 1), reservationFor(8, 40, 3, 0)}
	}
	// Eagle-C picks a1, the smallest remaining work.
	eg := queueFixture(t, SchedEagleC, eth, arch)
	if i := eg.choose(queue()); i != 1 {
		t.Fatalf("Eagle-C chose %d, want 1 (a1)", i)
	}
	// Phoenix is in CRV mode and runs e1 three times (sticky), then a1.
	q := queue()
	u1, a1 := q[0], q[1]
	for round, wantAcc := range []float64{8, 16, 24} {
		i := ph.choose(q)
		if i != 2 {
			t.Fatalf("try %d: Phoenix chose %d, want 2 (e1)", round+1, i)
		}
		ph.jump(q, i)
		if u1.acc != wantAcc || a1.acc != wantAcc {
			t.Fatalf("try %d: acc u1 %v a1 %v, want %v", round+1, u1.acc, a1.acc, wantAcc)
		}
	}
	// a1's slack is now 25-24 = 1 < 8: e1 is blocked, a1 runs (slack ahead
	// from u1 is 50-24 = 26 >= 5).
	i := ph.choose(q)
	if i != 1 {
		t.Fatalf("fourth try: Phoenix chose %d, want 1 (a1)", i)
	}
	ph.jump(q, i)
	if u1.acc != 29 || a1.acc != 24 {
		t.Fatalf("after a1: acc u1 %v a1 %v, want 29 and 24", u1.acc, a1.acc)
	}
	if ph.guardBreaches != 0 {
		t.Fatalf("guard breaches %d", ph.guardBreaches)
	}
}

// Invariant 5: under random queues, arrivals and picks, no short
// reservation is ever charged more than CAP x its estimate.
func TestPhoenixQueue_starvationGuard(t *testing.T) {
	for _, sched := range []string{SchedEagleC, SchedPhoenix, "weighted", SchedYaqD} {
		s := queueFixture(t, strings.Replace(sched, "weighted", SchedPhoenix, 1), offers.ClassLoad{Demand: 9, Supply: 4}, offers.ClassLoad{Demand: 1, Supply: 4})
		if sched == "weighted" {
			s.pol.weighted = true
			s.ix.classes[0].wait, s.ix.classes[1].wait = 300, 10
		}
		rng := rand.New(rand.NewPCG(7, 7))
		var q []*reservation
		enq := uint64(0)
		jumps := 0
		for step := range 5000 {
			for range rng.IntN(3) {
				enq++
				var cls []int
				if rng.IntN(3) == 0 {
					cls = []int{rng.IntN(2)}
				}
				q = append(q, reservationFor(1+rng.Float64()*20, rng.Float64()*500, enq, cls...))
			}
			if len(q) == 0 {
				continue
			}
			i := s.choose(q)
			if i > 0 {
				jumps++
			}
			s.jump(q, i)
			for _, r := range q {
				if r.acc > guardCap*r.est+1e-9 {
					t.Fatalf("%s step %d: acc %v > CAP x est %v", sched, step, r.acc, guardCap*r.est)
				}
			}
			if rng.IntN(3) > 0 { // not sticky: the task leaves the queue
				q = append(q[:i], q[i+1:]...)
			}
		}
		if jumps == 0 {
			t.Fatalf("%s: no reservation was ever jumped; the test exercised nothing", sched)
		}
		if s.guardBreaches != 0 {
			t.Fatalf("%s: %d guard breaches", sched, s.guardBreaches)
		}
	}
}

// Invariant 2: a long reservation at the head of a queue is always next,
// under every scheduler with a central long-job scheduler.
func TestPhoenixQueue_longAtHeadRunsNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sched := range []string{SchedEagleC, SchedPhoenix, SchedHawkC, SchedEagle} {
		s := queueFixture(t, sched, offers.ClassLoad{Demand: 9, Supply: 4})
		for range 500 {
			q := []*reservation{{job: &job{remain: 1e6}, long: true, est: 5000}}
			for k := range 1 + rng.IntN(8) {
				var cls []int
				if rng.IntN(2) == 0 {
					cls = []int{0}
				}
				q = append(q, reservationFor(rng.Float64()*10, rng.Float64(), uint64(k+2), cls...))
			}
			if i := s.choose(q); i != 0 {
				t.Fatalf("%s chose %d with a long reservation at the head", sched, i)
			}
		}
	}
}

// Hawk-C's queues are FIFO.
func TestPhoenixQueue_hawkFIFO(t *testing.T) {
	s := queueFixture(t, SchedHawkC)
	q := []*reservation{reservationFor(10, 100, 1), reservationFor(1, 1, 2)}
	if i := s.choose(q); i != 0 {
		t.Fatalf("Hawk-C chose %d, want the head", i)
	}
}

// ORDER = WEIGHTED: in CRV mode the score is R(job) - W; a contended
// reservation goes first only when its class wait outweighs its extra
// remaining work.
func TestPhoenixQueue_weightedOrder(t *testing.T) {
	s := queueFixture(t, SchedPhoenix, offers.ClassLoad{Demand: 6, Supply: 4}, offers.ClassLoad{Demand: 5, Supply: 8})
	s.pol.weighted = true
	q := []*reservation{reservationFor(10, 20, 1), reservationFor(5, 5, 2, 1), reservationFor(8, 40, 3, 0)}
	s.ix.classes[0].wait = 30 // e1: 40 - 30 = 10 > a1's 5
	if i := s.choose(q); i != 1 {
		t.Fatalf("chose %d, want 1 (a1)", i)
	}
	s.ix.classes[0].wait = 50 // e1: 40 - 50 = -10 < 5
	if i := s.choose(q); i != 2 {
		t.Fatalf("chose %d, want 2 (e1)", i)
	}
	s.ix.classes[0].load.Demand = 0
	s.ix.classes[0].load.Update(s.crv.h) // no contended reservation: SRPT
	if i := s.choose(q); i != 1 {
		t.Fatalf("without contention chose %d, want 1 (SRPT)", i)
	}
}
