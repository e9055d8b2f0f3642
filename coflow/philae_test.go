package coflow

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

func TestPilotCount(t *testing.T) {
	for _, tc := range []struct {
		senders int
		rho     float64
		want    int
	}{
		{1, 0.05, 1}, {19, 0.05, 1}, {20, 0.05, 1}, {39, 0.05, 1}, {40, 0.05, 2},
		{60, 0.05, 3}, {147, 0.05, 7}, {150, 0.05, 7}, {3, 0.7, 2}, {2, 1, 2}, {1, 0.5, 1},
	} {
		if got := pilotCount(tc.senders, tc.rho); got != tc.want {
			t.Errorf("pilotCount(%d, %v) = %d, want %d", tc.senders, tc.rho, got, tc.want)
		}
	}
}

func mustNew(t *testing.T, cfg Config) *Coordinator {
	t.Helper()
	co, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return co
}

func mustRegister(t *testing.T, co *Coordinator, sec float64, tc testCoflow) {
	t.Helper()
	if err := co.Register(at(sec), spec(tc)); err != nil {
		t.Fatalf("Register %s: %v", tc.id, err)
	}
}

func mustInfo(t *testing.T, co *Coordinator, id CoflowID) CoflowInfo {
	t.Helper()
	info, err := co.Info(id)
	if err != nil {
		t.Fatalf("Info %s: %v", id, err)
	}
	return info
}

func TestPhilae_PilotSelection(t *testing.T) {
	// ThinLimit 3 so that four-flow coflows pilot; ρ = 0.7.
	cfg := testConfig(SchedulerPhilae, 8)
	cfg.ThinLimit, cfg.PilotFraction = 3, 0.7
	co := mustNew(t, cfg)

	// P: senders [0 1], receivers [2 3]; m = min(2, max(1, ⌊1.4⌋)) = 1.
	// All loads 0: sender 0 (first), receiver 2 (first): flow 0 (0→2).
	// Loads now: egress 0 = 1, ingress 2 = 1.
	mustRegister(t, co, 0, testCoflow{id: "P", flows: []flowMB{{0, 2, 1}, {0, 3, 1}, {1, 2, 1}, {1, 3, 1}}})
	// Q: senders [0 1 4], receivers [2 3]; m = ⌊2.1⌋ = 2.
	// Pick 1: egress loads 0:1, 1:0, 4:0 → sender 1. Receivers by ingress
	//   load: 3 (0) before 2 (1) → 1→3 exists: flow 3. Loads: e1 = 1, i3 = 1.
	// Pick 2: candidates 0 (1), 4 (0) → sender 4. Receivers tie at 1 → list
	//   order: 2 first → 4→2 exists: flow 4.
	mustRegister(t, co, 0, testCoflow{id: "Q", flows: []flowMB{{0, 2, 1}, {0, 3, 1}, {1, 2, 1}, {1, 3, 1}, {4, 2, 1}}})
	// R: senders [0 7], one pilot. Egress 0 carries P's pilot, 7 nothing:
	// sender 7, flow 1 (7→5).
	mustRegister(t, co, 0, testCoflow{id: "R", flows: []flowMB{{0, 5, 1}, {7, 5, 1}, {0, 6, 1}, {7, 6, 1}}})
	// P's pilot finishes and egress 0's count drops to 0, so S (R's shape)
	// takes sender 0 (tied with 7, first in its list). Its receivers by
	// load: 6 (0) before 5 (1, R's pilot 7→5): flow 2 (0→6).
	if err := co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"P", 0}, Bytes: mb, Pilot: true}); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, co, 1, testCoflow{id: "S", flows: []flowMB{{0, 5, 1}, {7, 5, 1}, {0, 6, 1}, {7, 6, 1}}})
	for id, want := range map[CoflowID][]int{"P": {0}, "Q": {3, 4}, "R": {1}, "S": {2}} {
		if got := mustInfo(t, co, id).Pilots; !equalInts(got, want) {
			t.Errorf("pilots of %s: %v, want %v", id, got, want)
		}
	}
}

func TestPhilae_ThinLimitDefault(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerPhilae, 20))
	seven := testCoflow{id: "seven"}
	for r := range 7 {
		seven.flows = append(seven.flows, flowMB{0, Port(1 + r), 1})
	}
	eight := testCoflow{id: "eight"}
	for s := range 2 {
		for r := range 4 {
			eight.flows = append(eight.flows, flowMB{Port(10 + s), Port(14 + r), 1})
		}
	}
	mustRegister(t, co, 0, seven)
	mustRegister(t, co, 0, eight)
	if got := mustInfo(t, co, "seven"); got.Phase != PhaseThin || len(got.Pilots) != 0 {
		t.Errorf("7 flows: phase %v with %d pilots, want thin with none", got.Phase, len(got.Pilots))
	}
	if got := mustInfo(t, co, "eight"); got.Phase != PhasePilot || !equalInts(got.Pilots, []int{0}) {
		t.Errorf("8 flows: phase %v pilots %v, want pilot with [0]", got.Phase, got.Pilots)
	}
	// A thin coflow's flows are all granted at once, in the top class.
	d, err := co.Decide(at(0))
	if err != nil {
		t.Fatal(err)
	}
	if g := d.Grants[0]; g.Coflow != "seven" || g.Class != ClassThin || len(g.Flows) != 7 {
		t.Errorf("first grant %s/%v with %d flows, want seven/thin with 7", g.Coflow, g.Class, len(g.Flows))
	}
}

// estimateSet: one coflow, senders [0 1 4], receivers [2 3], five flows;
// with ρ = 0.7 its pilots are flow 0 (0→2: sender 0, receiver 2 on a fresh
// fabric) and flow 3 (1→3: sender 1, then receiver 3, which is less loaded
// than 2).
var estimateSet = testCoflow{id: "E", flows: []flowMB{{0, 2, 3}, {0, 3, 7}, {1, 2, 7}, {1, 3, 5}, {4, 2, 7}}}

func TestPhilae_SizeEstimateAndQueue(t *testing.T) {
	// The pilots finish with 3 MB and 5 MB: l̂ = 4 MB, Ŝ = l̂·N = 20 MB.
	// Unfinished after the pilots: 0→3, 1→2, 4→2, on egress 0, 1, 4 and
	// ingress 2, 3: five port sides, each with contention k = 1 (itself).
	// Queues: Q0 [0, 10 MB), Q1 [10, 100 MB), ...
	//   A: x = Ŝ = 20 MB → Q1.
	//   B: x = Ŝ − bytes sent = 20 − 8 = 12 MB → Q1; after a report that
	//      0→3 has sent 7 MB: 20 − 15 = 5 MB → Q0.
	//   C: not piloted at all.
	//   D: x = Σ max(1, l̂ − b_p)·k_p = 5 · 4 MB = 20 MB → Q1; without
	//      counting itself k_p = 0 and x = 0 → Q0; with the 7 MB report,
	//      b = 7 MB at egress 0 and ingress 3, so those sides count 1 byte
	//      each: x = 3 · 4 MB + 2 → Q1.
	for _, tc := range []struct {
		name      string
		policy    Policy
		noSelf    bool
		report    int64 // MB sent by 0→3 before the decision
		wantX     float64
		wantQueue int
	}{
		{"A", PolicyA, false, 0, 20 * mb, 1},
		{"B", PolicyB, false, 0, 12 * mb, 1},
		{"B with progress", PolicyB, false, 7, 5 * mb, 0},
		{"D", PolicyD, false, 0, 20 * mb, 1},
		{"D without self", PolicyD, true, 0, 0, 0},
		{"D with progress", PolicyD, false, 7, 12*mb + 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(SchedulerPhilae, 5)
			cfg.ThinLimit, cfg.PilotFraction, cfg.Policy = 3, 0.7, tc.policy
			cfg.ContentionIncludesSelf = !tc.noSelf
			co := mustNew(t, cfg)
			mustRegister(t, co, 0, estimateSet)
			if got := mustInfo(t, co, "E").Pilots; !equalInts(got, []int{0, 3}) {
				t.Fatalf("pilots %v, want [0 3]", got)
			}
			for _, p := range []struct {
				flow  int
				bytes int64
			}{{0, 3 * mb}, {3, 5 * mb}} {
				if err := co.FlowCompleted(at(5), FlowCompletion{Flow: FlowRef{"E", p.flow}, Bytes: p.bytes, Pilot: true}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.report > 0 {
				if err := co.Progress(at(5), []FlowProgress{{Flow: FlowRef{"E", 1}, Sent: tc.report * mb}}); err != nil {
					t.Fatal(err)
				}
			}
			d, err := co.Decide(at(5))
			if err != nil {
				t.Fatal(err)
			}
			info := mustInfo(t, co, "E")
			if info.Estimate != 4*mb || info.EstimatedSize != 20*mb || !info.EstimatedAt.Equal(at(5)) {
				t.Errorf("estimate l̂=%v Ŝ=%v at %v, want %v, %v at 5s", info.Estimate, info.EstimatedSize,
					seconds(info.EstimatedAt), 4*mb, 20*mb)
			}
			if info.Metric != tc.wantX || info.Queue != tc.wantQueue {
				t.Errorf("x = %v (queue %d), want %v (queue %d)", info.Metric, info.Queue, tc.wantX, tc.wantQueue)
			}
			if len(d.Grants) != 1 || d.Grants[0].Queue != tc.wantQueue || d.Grants[0].Class != ClassWorking {
				t.Errorf("grants %+v, want one working grant in queue %d", d.Grants, tc.wantQueue)
			}
		})
	}
}

func TestQueueOf(t *testing.T) {
	cfg := DefaultConfig(1) // Q_hi_0 = 10 MiB, E = 10, K = 10
	for _, tc := range []struct {
		x    float64
		want int
	}{
		{0, 0}, {10*mb - 1, 0}, {10 * mb, 1}, {100*mb - 1, 1}, {100 * mb, 2},
		{1e3 * mb, 3}, {1e8*mb - 1, 7}, {1e8 * mb, 8}, {1e9 * mb, 9}, {math.Inf(1), 9},
	} {
		if got := queueOf(&cfg, tc.x); got != tc.want {
			t.Errorf("queueOf(%v MB) = %d, want %d", tc.x/mb, got, tc.want)
		}
	}
	if got := queueLimit(&cfg, 2); got != 1000*mb {
		t.Errorf("queueLimit(2) = %v, want 1000 MB", got)
	}
}

func TestSlotPlan(t *testing.T) {
	cfg := DefaultConfig(1) // W = 256, w = 10, δ = 8 ms
	var p slotPlan
	slot := func(k int64) time.Time { return epoch.Add(time.Duration(k) * cfg.Slot) }
	// Non-empty queues 2, 3, 4, 5: q_min = 2 gets 256, 3 gets ⌊25.6⌋ = 25,
	// 4 gets ⌊2.56⌋ = 2, 5 gets 0. A round is 283 slots.
	nonEmpty := []int{2, 3, 4, 5}
	for _, tc := range []struct {
		slot      int64
		wantQueue int
		wantEnd   int64
	}{
		{0, 2, 256}, {255, 2, 256}, {256, 3, 281}, {280, 3, 281}, {281, 4, 283}, {282, 4, 283},
		{283, 2, 283 + 256}, // next round
		{283*3 + 260, 3, 283*3 + 281},
	} {
		q, end := p.at(slot(tc.slot), nonEmpty, &cfg)
		if q != tc.wantQueue || !end.Equal(slot(tc.wantEnd)) {
			t.Errorf("slot %d: queue %d until slot %v, want %d until %d", tc.slot, q,
				end.Sub(epoch)/cfg.Slot, tc.wantQueue, tc.wantEnd)
		}
	}
	// Over whole rounds the slot counts are 256 : 25 : 2.
	count := map[int]int{}
	var q2 slotPlan
	for k := range int64(283 * 4) {
		q, _ := q2.at(slot(k), nonEmpty, &cfg)
		count[q]++
	}
	if count[2] != 1024 || count[3] != 100 || count[4] != 8 || count[5] != 0 {
		t.Errorf("slots over 4 rounds: %v, want 2:1024 3:100 4:8", count)
	}
	// A new top queue replans at once; no non-empty queue drops the plan.
	if q, _ := q2.at(slot(283*4+10), []int{0, 2}, &cfg); q != 0 {
		t.Errorf("after queue 0 fills: working queue %d, want 0", q)
	}
	if q, end := q2.at(slot(283*4+11), nil, &cfg); q != -1 || !end.IsZero() {
		t.Errorf("no queues: %d until %v, want -1 and no end", q, end)
	}
}

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
	//      both Q0, X entered first (same recomputation, earlier arrival).
	// X first (B, D): 2→3 keeps ingress 3 until t=9; then Y's 6→3 runs
	//   9..11 (CCT(Y) = 11) and X's 1→5, 2→4 run 9..12 (CCT(X) = 12).
	// Y first (A): t=8: 6→3 takes ingress 3; X runs 0→5, 1→4 (done t=9);
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
		wantX, wantY float64
		firstAt8     CoflowID // first main-queue grant decided at t=8
	}{
		{PolicyA, 13, 10, "Y"},
		{PolicyB, 12, 11, "X"},
		{PolicyC, 12, 11, "X"},
		{PolicyD, 12, 11, "X"},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			cfg := testConfig(SchedulerPhilae, 8)
			cfg.ThinLimit, cfg.WorkConserving, cfg.Policy = 1, false, tc.policy
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

func TestCoordinator_Errors(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerPhilae, 4))
	mustRegister(t, co, 1, testCoflow{id: "A", flows: []flowMB{{0, 1, 1}}})
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"duplicate coflow", co.Register(at(1), spec(testCoflow{id: "A", flows: []flowMB{{0, 1, 1}}})), ErrDuplicateCoflow},
		{"bad port", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 4}}}), ErrBadPort},
		{"negative port", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: -1, Dst: 1}}}), ErrBadPort},
		{"duplicate flow", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 1}, {Src: 0, Dst: 1}}}), ErrDuplicateFlow},
		{"no flows", co.Register(at(1), CoflowSpec{ID: "B"}), ErrBadSpec},
		{"negative size", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 1, Size: -1}}}), ErrBadSpec},
		{"time backwards", co.Register(at(0), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 1}}}), ErrTimeBackwards},
		{"flow of unknown coflow", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"Z", 0}}), ErrUnknownCoflow},
		{"unknown flow", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 1}}), ErrUnknownFlow},
		{"negative bytes", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: -1}), ErrBadBytes},
		{"pilot mismatch", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 0}, Pilot: true}), ErrPilotMismatch},
		{"progress of unknown coflow", co.Progress(at(1), []FlowProgress{{Flow: FlowRef{"Z", 0}}}), ErrUnknownCoflow},
		{"negative progress", co.Progress(at(1), []FlowProgress{{Flow: FlowRef{"A", 0}, Sent: -1}}), ErrBadBytes},
		{"deregister unknown", co.Deregister(at(1), "Z"), ErrUnknownCoflow},
		{"info unknown", func() error { _, err := co.Info("Z"); return err }(), ErrUnknownCoflow},
		{"decide backwards", func() error { _, err := co.Decide(at(0)); return err }(), ErrTimeBackwards},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := co.FlowCompleted(at(2), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: mb}); err != nil {
		t.Fatal(err)
	}
	if err := co.FlowCompleted(at(2), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: mb}); !errors.Is(err, ErrFlowFinished) {
		t.Errorf("second completion: got %v, want ErrFlowFinished", err)
	}
	// The wire code survives: a bad port is an invalid argument.
	err := co.Register(at(2), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 9}}})
	if !errors.Is(err, ErrBadPort) || !isInvalidArgument(err) {
		t.Errorf("bad port error %v does not match protocol.ErrInvalidArgument", err)
	}

	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want error
	}{
		{"scheduler", func(c *Config) { c.Scheduler = "varys" }, ErrUnknownScheduler},
		{"policy", func(c *Config) { c.Policy = "E" }, ErrUnknownPolicy},
		{"ports", func(c *Config) { c.Ports = 0 }, ErrInvalidConfig},
		{"growth", func(c *Config) { c.QueueGrowth = 1 }, ErrInvalidConfig},
		{"pilot fraction", func(c *Config) { c.PilotFraction = 0 }, ErrInvalidConfig},
		{"slot", func(c *Config) { c.Slot = 0 }, ErrInvalidConfig},
		{"capacity", func(c *Config) { c.Capacity = math.NaN() }, ErrInvalidConfig},
	} {
		cfg := DefaultConfig(4)
		tc.mod(&cfg)
		if _, err := New(cfg); !errors.Is(err, tc.want) {
			t.Errorf("config %s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}
