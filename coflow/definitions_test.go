package coflow

import "testing"

// FIFO and FAIR as the reference simulator defines them (madd.go, SplitRate):
// the cases of sim/coflowsim's TestRunCoflowSim_FIFOAndFairDefinitions, worked there.
func TestFIFO_MADDLeavesRoomBehindTheBottleneck(t *testing.T) {
	set := []testCoflow{
		{id: "A", flows: []flowMB{{0, 2, 2}, {0, 3, 2}}},
		{id: "B", flows: []flowMB{{1, 2, 1}}},
	}
	res := runFluid(t, testConfig(SchedulerFIFO, 4), set, fluidOpts{reportEachDecision: true})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 4, "B": 2})
}

func TestFairSplit_EqualSplitPerPortSide(t *testing.T) {
	set := []testCoflow{
		{id: "A", flows: []flowMB{{0, 2, 1}}},
		{id: "B", flows: []flowMB{{0, 3, 1}}},
		{id: "C", flows: []flowMB{{1, 3, 1}}},
		{id: "D", flows: []flowMB{{4, 3, 1}}},
	}
	res := runFluid(t, testConfig(SchedulerFairSplit, 5), set, fluidOpts{})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 2, "B": 3, "C": 3, "D": 3})
	if got := SplitRate(6, 2, 3); got != 2 {
		t.Errorf("SplitRate(6, 2, 3) = %v, want 2 (the ingress's third)", got)
	}
}

// The per-port remaining bytes behind sebf's Γ follow progress reports and
// completions exactly as a rescan of the flows would.
func TestRemainingBytesPerPort(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerSEBF, 4))
	sp := CoflowSpec{ID: "X", Flows: []FlowSpec{{0, 2, 5 * mb}, {0, 3, 3 * mb}, {1, 2, 2 * mb}}}
	if err := co.Register(at(0), sp); err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error {
			return co.Progress(at(1), []FlowProgress{{FlowRef{"X", 0}, 1 * mb}, {FlowRef{"X", 2}, 2 * mb}})
		},
		func() error { return co.FlowCompleted(at(2), FlowCompletion{Flow: FlowRef{"X", 2}, Bytes: 2 * mb}) },
		func() error {
			return co.Progress(at(3), []FlowProgress{{FlowRef{"X", 0}, 4 * mb}, {FlowRef{"X", 1}, 3 * mb}})
		},
		func() error { return co.FlowCompleted(at(4), FlowCompletion{Flow: FlowRef{"X", 1}, Bytes: 4 * mb}) },
	}
	// Egress 0 carries flows 0 and 1, egress 1 flow 2; ingress 2 flows 0
	// and 2, ingress 3 flow 1. After each step, in MB:
	want := [][4]int64{{7, 0, 4, 3}, {7, 0, 4, 3}, {1, 0, 1, 0}, {1, 0, 1, 0}}
	c := co.coflows["X"]
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got := [4]int64{c.sendRem[0] / mb, c.sendRem[1] / mb, c.recvRem[0] / mb, c.recvRem[1] / mb}
		if got != want[i] {
			t.Errorf("step %d: remaining (egress 0, 1; ingress 2, 3) = %v MB, want %v", i, got, want[i])
		}
	}
	if g := float64(bottleneck(c)) / mb; g != 1 {
		t.Errorf("bottleneck %v MB, want 1", g)
	}
}

// Stale tells a caller when a progress report is worth sending: only
// before a Decide that recomputes.
func TestCoordinator_Stale(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerFIFO, 4))
	if !co.Stale(at(0)) {
		t.Error("no decision yet: want stale")
	}
	sp := CoflowSpec{ID: "A", Flows: []FlowSpec{{0, 2, mb}, {1, 2, mb}}}
	if err := co.Register(at(0), sp); err != nil {
		t.Fatal(err)
	}
	if _, err := co.Decide(at(0)); err != nil {
		t.Fatal(err)
	}
	if co.Stale(at(1)) {
		t.Error("nothing happened since the decision: want not stale")
	}
	// A completion inside the coflow changes no MADD cap: still current.
	if err := co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: mb}); err != nil {
		t.Fatal(err)
	}
	if co.Stale(at(1)) {
		t.Error("fifo after a flow completion: want not stale")
	}
	if err := co.FlowCompleted(at(2), FlowCompletion{Flow: FlowRef{"A", 1}, Bytes: mb}); err != nil {
		t.Fatal(err)
	}
	if !co.Stale(at(2)) {
		t.Error("the coflow finished: want stale")
	}
}
