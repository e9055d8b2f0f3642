package coflow

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchCoordinator registers active coflows on 900 ports, shaped roughly
// like FB2010 (half thin, half wide with up to 30×30 flows), and finishes
// the pilots of two wide coflows out of three so that the main queues are
// busy too.
func benchCoordinator(b *testing.B, s Scheduler, active int) *Coordinator {
	b.Helper()
	cfg := DefaultConfig(900)
	cfg.Scheduler = s
	co, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range active {
		var m, r int
		if i%2 == 0 {
			m, r = 1+rng.IntN(2), 1+rng.IntN(3)
		} else {
			m, r = 2+rng.IntN(29), 2+rng.IntN(29)
		}
		ports := rng.Perm(900)
		sp := CoflowSpec{ID: CoflowID(fmt.Sprint("c", i))}
		for _, src := range ports[:m] {
			for _, dst := range ports[m : m+r] {
				sp.Flows = append(sp.Flows, FlowSpec{Src: Port(src), Dst: Port(dst), Size: 1 + rng.Int64N(100<<20)})
			}
		}
		if err := co.Register(at(0), sp); err != nil {
			b.Fatal(err)
		}
		if info, _ := co.Info(sp.ID); i%3 != 0 && info.Phase == PhasePilot {
			for _, f := range info.Pilots {
				fc := FlowCompletion{Flow: FlowRef{sp.ID, f}, Bytes: 1 + rng.Int64N(10<<20), Pilot: true}
				if err := co.FlowCompleted(at(0), fc); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return co
}

// BenchmarkCoordinatorEvent measures one event plus the decision it forces:
// a thin coflow arrives (or leaves) among the active ones and Decide
// recomputes the whole order, as philae does on every arrival and
// completion.
func BenchmarkCoordinatorEvent(b *testing.B) {
	for _, s := range []Scheduler{SchedulerPhilae, SchedulerAalo, SchedulerSEBF} {
		for _, active := range []int{100, 500} {
			b.Run(fmt.Sprintf("%s/active=%d", s, active), func(b *testing.B) {
				co := benchCoordinator(b, s, active)
				probe := CoflowSpec{ID: "probe", Flows: []FlowSpec{{Src: 1, Dst: 2, Size: 1}, {Src: 3, Dst: 2, Size: 1}}}
				i := 0
				for b.Loop() {
					i++
					var err error
					if i%2 == 1 {
						err = co.Register(at(float64(i)), probe)
					} else {
						err = co.Deregister(at(float64(i)), probe.ID)
					}
					if err != nil {
						b.Fatal(err)
					}
					if _, err := co.Decide(at(float64(i))); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRates measures turning a philae decision into rates.
func BenchmarkRates(b *testing.B) {
	co := benchCoordinator(b, SchedulerPhilae, 500)
	d, err := co.Decide(at(0))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Rates(d, 125e6, co)
	}
}
