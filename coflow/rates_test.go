package coflow

import (
	"fmt"
	"math"
	"testing"
)

func TestRates_PriorityCapsAndBackfill(t *testing.T) {
	links := []Link{{0, 2}, {1, 2}, {1, 3}}
	d := &Decision{Ports: 4, Grants: []Grant{
		// X: 0→2 capped at 0.25, 1→2 uncapped.
		{Coflow: "X", Flows: []int{0, 1}, Links: links, Caps: []float64{0.25, 1}},
		// Y: 1→3 uncapped, lower priority.
		{Coflow: "Y", Flows: []int{2}, Links: links},
	}}
	// Pass 1: X0 = min(0.25, 1, 1) = 0.25; X1 = min(1, e1 1, i2 0.75) = 0.75;
	// Y2 = min(e1 0.25, i3 1) = 0.25. Pass 2 (backfill of capped grants):
	// X0 gets min(e0 0.75, i2 0) = 0 more; X1 min(e1 0, ...) = 0.
	checkRates(t, Rates(d, 1, nil), map[string]float64{"X/0": 0.25, "X/1": 0.75, "Y/2": 0.25})
	// Finished flows are skipped: without X/1, Y's 1→3 gets the whole egress 1
	// and the backfill lifts X/0 to the whole of egress 0 and ingress 2.
	fin := finishedSet{FlowRef{"X", 1}: true}
	checkRates(t, Rates(d, 1, fin), map[string]float64{"X/0": 1, "Y/2": 1})
}

// checkRates compares rates with want, keyed "coflow/flow", to 1e-12.
func checkRates(t *testing.T, rates []FlowRate, want map[string]float64) {
	t.Helper()
	got := map[string]float64{}
	for _, r := range rates {
		got[fmt.Sprintf("%s/%d", r.Flow.Coflow, r.Flow.Flow)] = r.Rate
	}
	if len(got) != len(want) {
		t.Fatalf("rates %v, want %v", got, want)
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-12 {
			t.Errorf("rate %s = %v, want %v", k, got[k], w)
		}
	}
}

type finishedSet map[FlowRef]bool

func (s finishedSet) Finished(c CoflowID, f int) bool { return s[FlowRef{c, f}] }

func TestDecision_Egress(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerFIFO, 4))
	mustRegister(t, co, 0, testCoflow{id: "A", flows: []flowMB{{0, 2, 1}, {1, 2, 1}, {0, 3, 1}}})
	mustRegister(t, co, 0, testCoflow{id: "B", flows: []flowMB{{0, 1, 1}}})
	d, _ := co.Decide(at(0))
	// A's flows go sender-major (0→2, 0→3, 1→2), then B's.
	got := d.Egress(0, co)
	want := []FlowRef{{"A", 0}, {"A", 2}, {"B", 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("egress 0: %v, want %v", got, want)
	}
	if err := co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: mb}); err != nil {
		t.Fatal(err)
	}
	if got := d.Egress(0, co); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Errorf("egress 0 after A/0 finished: %v, want %v", got, want[1:])
	}
}

func TestCoordinator_DeregisterWithdraws(t *testing.T) {
	// A withdrawn piloting coflow releases its pilot load and its ports.
	cfg := testConfig(SchedulerPhilae, 4)
	cfg.ThinLimit = 0
	co := mustNew(t, cfg)
	mustRegister(t, co, 0, testCoflow{id: "A", flows: []flowMB{{0, 2, 1}}})
	if err := co.Deregister(at(1), "A"); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, co, 1, testCoflow{id: "B", flows: []flowMB{{1, 2, 1}, {0, 3, 1}}})
	// With A's pilot gone, ingress 2 and egress 0 are free again: B's pilot
	// is its first flow (sender 1, first in its list).
	if got := mustInfo(t, co, "B").Pilots; !equalInts(got, []int{0}) {
		t.Errorf("pilots of B: %v, want [0]", got)
	}
	d, _ := co.Decide(at(1))
	for _, g := range d.Grants {
		if g.Coflow == "A" {
			t.Errorf("withdrawn coflow A still granted: %+v", g)
		}
	}
	if !co.Finished("A", 0) {
		t.Errorf("flows of a deregistered coflow should count as finished")
	}
}

func TestCoordinator_Deterministic(t *testing.T) {
	// Same events, same decisions: every scheduler, twice over the policy set.
	for _, s := range Schedulers() {
		t.Run(string(s), func(t *testing.T) {
			run := func() []string {
				var log []string
				cfg := testConfig(s, 8)
				cfg.ThinLimit = 1
				runFluid(t, cfg, policySet, fluidOpts{reportEvery: 0.5, onDecide: func(sec float64, d *Decision) {
					for _, g := range d.Grants {
						log = append(log, fmt.Sprintf("%v %d %s %v %d %v %v", sec, d.Epoch, g.Coflow, g.Class, g.Queue, g.Flows, g.Caps))
					}
				}})
				return log
			}
			a, b := run(), run()
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("two runs decided differently:\n%v\n%v", a, b)
			}
		})
	}
}
