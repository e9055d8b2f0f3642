package coflow

import (
	"fmt"
	"testing"
)

func TestPhilae_ThinBypassAndWorkConservation(t *testing.T) {
	// Part 1, one coflow A at t=0: 0→2 2 MB, 1→3 2 MB.
	//   thin (T = 7): both flows at once: CCT 2.
	//   piloted (T = 0), work conserving: the pilot is 0→2; 1→3 uses the
	//     idle egress 1 and ingress 3 meanwhile: CCT 2.
	//   piloted, not work conserving: 0→2 alone until t=2 (l̂ = 2 MB),
	//     then 1→3 from the main queue: CCT 4.
	pair := []testCoflow{{id: "A", flows: []flowMB{{0, 2, 2}, {1, 3, 2}}}}
	for _, tc := range []struct {
		name string
		thin int
		wc   bool
		want float64
	}{
		{"thin", 7, true, 2},
		{"piloted, work conserving", 0, true, 2},
		{"piloted, idle ports wasted", 0, false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(SchedulerPhilae, 4)
			cfg.ThinLimit, cfg.WorkConserving = tc.thin, tc.wc
			res := runFluid(t, cfg, pair, fluidOpts{})
			checkCCT(t, res.cct, map[CoflowID]float64{"A": tc.want})
		})
	}

	// Part 2, thin coflows jump the pilots. W at t=0: 0→2, 0→3, 1→2, 3 MB
	// each (senders [0 1], one pilot: 0→2). S at t=1: 0→4 1 MB, 5→2 1 MB,
	// on W's pilot's egress and ingress.
	//   T = 2 (S thin, W wide):
	//     t=0: W's pilot 0→2. W's other flows need egress 0 or ingress 2.
	//     t=1: S is thin, above pilots: 0→4 and 5→2 pause the pilot.
	//     t=2: S done: CCT(S) = 1. The pilot resumes with 2 MB.
	//     t=4: l̂ = 3 MB; W queued: 0→3 and 1→2 in parallel until t=7:
	//          CCT(W) = 7.
	//   T = 0 (S pilots too, m = 1): S's sender 0 carries W's pilot, 5 none:
	//     S's pilot is 5→2, behind W's pilot (FIFO by arrival) on ingress 2.
	//     t=3: W's pilot done; W queued with 0→3 (1→2 waits: S's pilot now
	//          holds ingress 2). S's 0→4 is only work conserving: egress 0
	//          is W's.
	//     t=4: S's pilot done, l̂ = 1 MB. x_D(S) = 1 MB·(k_e0 2 + k_i4 1) =
	//          3 MB → Q0; x_D(W) = 3 MB·(e0 2 + i3 1 + e1 1 + i2 1) = 15 MB
	//          → Q1. S's 0→4 goes first and W's 0→3 (2 MB left) waits; W's
	//          1→2 runs 4..7.
	//     t=5: S done: CCT(S) = 5−1 = 4. W's 0→3 runs 5..7: CCT(W) = 7.
	thinSet := []testCoflow{
		{id: "W", flows: []flowMB{{0, 2, 3}, {0, 3, 3}, {1, 2, 3}}},
		{id: "S", arrival: 1, flows: []flowMB{{0, 4, 1}, {5, 2, 1}}},
	}
	for _, tc := range []struct {
		thin  int
		wantS float64
	}{{2, 1}, {0, 4}} {
		t.Run(fmt.Sprintf("thin limit %d", tc.thin), func(t *testing.T) {
			cfg := testConfig(SchedulerPhilae, 6)
			cfg.ThinLimit = tc.thin
			res := runFluid(t, cfg, thinSet, fluidOpts{})
			checkCCT(t, res.cct, map[CoflowID]float64{"S": tc.wantS, "W": 7})
		})
	}
}

// policySet makes the four policies disagree. X at t=0: all nine flows from
// senders 0, 1, 2 to receivers 3, 4, 5, 3 MB each; its pilot is 0→3. Y at
// t=0: 6→3 2 MB and 6→7 8 MB; its pilot is 6→7 (ingress 3 already carries
// X's pilot). Y's 6→3 shares ingress 3 with X.
var policySet = []testCoflow{
	{id: "X", flows: []flowMB{
		{0, 3, 3}, {0, 4, 3}, {0, 5, 3}, {1, 3, 3}, {1, 4, 3}, {1, 5, 3}, {2, 3, 3}, {2, 4, 3}, {2, 5, 3}}},
	{id: "Y", flows: []flowMB{{6, 3, 2}, {6, 7, 8}}},
}

func TestPhilae_PolicyOrdering(t *testing.T) {
	// T = 1 (both pilot), no work conservation, Q0 = [0, 22 MB),
	// Q1 = [22, 220 MB).
	//
	// Common start (A, B, D): the pilots 0→3 and 6→7 run on disjoint ports.
	// t=3: X's pilot done, l̂_X = 3 MB; X alone in the main queues. Greedy
	//   over X's flows: round 1 = 0→4, 1→3, 2→5 (t=3..6), round 2 = 0→5,
	//   1→4, 2→3 (t=6..9). Y's 6→3 waits (Y is still piloting).
	// t=8: Y's pilot done, l̂_Y = 8 MB. X has 1 MB left on each round-2
	//   flow, and 1→5, 2→4 untouched; ingress 3 carries X (2→3) and Y (6→3).
	//   A: x_X = 3·9 = 27 MB (Q1), x_Y = 8·2 = 16 MB (Q0): Y first.
	//   D: x_X = 3·(e0 1 + e1 1 + e2 1 + i3 2 + i4 1 + i5 1) = 21 MB (Q0),
	//      x_Y = 8·(e6 1 + i3 2) = 24 MB (Q1): X first.
	//   B: x_X = 27 − 12 (pilot + round 1) = 15 MB, x_Y = 16 − 8 = 8 MB:
	//      both Q0: Y first by metric; with QueueFIFO, X, which entered
	//      first (same recomputation, earlier arrival).
	// X first (B with QueueFIFO, D): 2→3 keeps ingress 3 until t=9; then Y's 6→3 runs
	//   9..11 (CCT(Y) = 11) and X's 1→5, 2→4 run 9..12 (CCT(X) = 12).
	// Y first (A, B): t=8: 6→3 takes ingress 3; X runs 0→5, 1→4 (done t=9);
	//   2→4 waits for ingress 4. t=9: 6→3, 1→5, 2→4. t=10: Y done
	//   (CCT(Y) = 10); X's 2→3 comes before 2→4 on egress 2: 1→5, 2→3
	//   until t=11, then 1→5 (done t=12), 2→4 (2 MB left, done t=13):
	//   CCT(X) = 13.
	// C pilots nothing; every coflow has x = c = 1 (they share ingress 3)
	//   and sits in Q0, X first by entry. t=0..3: 0→3, 1→4, 2→5, 6→7;
	//   t=3..6: 0→4, 1→3, 6→7; t=6..9: 0→5, 2→3, 6→7 (done t=8); t=9:
	//   X has left egress 0 and ingress 3, c = 0: 1→5, 2→4, 6→3 in
	//   parallel: CCT(Y) = 11, CCT(X) = 12.
	for _, tc := range []struct {
		policy       Policy
		fifo         bool
		wantX, wantY float64
		firstAt8     CoflowID // first main-queue grant decided at t=8
	}{
		{PolicyA, false, 13, 10, "Y"},
		{PolicyB, false, 13, 10, "Y"},
		{PolicyB, true, 12, 11, "X"},
		{PolicyC, false, 12, 11, "X"},
		{PolicyD, false, 12, 11, "X"},
	} {
		t.Run(fmt.Sprintf("%s/fifo=%v", tc.policy, tc.fifo), func(t *testing.T) {
			cfg := testConfig(SchedulerPhilae, 8)
			cfg.ThinLimit, cfg.WorkConserving, cfg.Policy = 1, false, tc.policy
			cfg.QueueFIFO = tc.fifo
			cfg.FirstQueueLimit = 22 * mb
			var first CoflowID
			res := runFluid(t, cfg, policySet, fluidOpts{onDecide: func(sec float64, d *Decision) {
				if sec == 8 {
					first = d.Grants[0].Coflow
				}
			}})
			checkCCT(t, res.cct, map[CoflowID]float64{"X": tc.wantX, "Y": tc.wantY})
			if first != tc.firstAt8 {
				t.Errorf("first grant at t=8: %q, want %q", first, tc.firstAt8)
			}
		})
	}
}

func TestPhilae_RecomputesOnlyOnEvents(t *testing.T) {
	// Policy A is not contention-aware: W's non-pilot completions must not
	// recompute; D recomputes when a coflow leaves a port.
	cfg := testConfig(SchedulerPhilae, 6)
	cfg.ThinLimit, cfg.Policy = 1, PolicyA
	co := mustNew(t, cfg)
	mustRegister(t, co, 0, testCoflow{id: "W", flows: []flowMB{{0, 2, 1}, {0, 3, 1}, {1, 2, 1}}})
	d1, _ := co.Decide(at(0))
	done := func(sec float64, f int, pilot bool) {
		t.Helper()
		if err := co.FlowCompleted(at(sec), FlowCompletion{Flow: FlowRef{"W", f}, Bytes: mb, Pilot: pilot}); err != nil {
			t.Fatal(err)
		}
	}
	done(0.5, 2, false) // work-conserving flow 1→2: no recompute
	if d, _ := co.Decide(at(0.5)); d != d1 {
		t.Errorf("non-pilot completion recomputed (epoch %d → %d)", d1.Epoch, d.Epoch)
	}
	done(1, 0, true) // last pilot: recompute
	d2, _ := co.Decide(at(1))
	if d2 == d1 || d2.Epoch != 2 {
		t.Errorf("last pilot did not recompute (epoch %d)", d2.Epoch)
	}
	if got := co.Finished("W", 0); !got {
		t.Errorf("Finished(W, 0) = false after completion")
	}
}
