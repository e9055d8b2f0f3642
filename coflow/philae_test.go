package coflow

import (
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

// TestPhilae_Reestimate: every flow of a queued coflow that finishes is
// one more sample of its flow lengths. Pilots of 3 and 5 MB give l̂ = 4 MB
// (policy A: x = l̂·5 = 20 MB, queue 1); a non-pilot flow of 151 MB then
// makes l̂ = 53 MB and x = 265 MB, queue 2. The estimate reported as the
// pilots' (Info.Estimate) stays 4 MB.
func TestPhilae_Reestimate(t *testing.T) {
	cfg := testConfig(SchedulerPhilae, 5)
	cfg.ThinLimit, cfg.PilotFraction, cfg.Policy = 3, 0.7, PolicyA
	co := mustNew(t, cfg)
	mustRegister(t, co, 0, estimateSet)
	for _, p := range []struct {
		flow  int
		bytes int64
	}{{0, 3 * mb}, {3, 5 * mb}} {
		if err := co.FlowCompleted(at(5), FlowCompletion{Flow: FlowRef{"E", p.flow}, Bytes: p.bytes, Pilot: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := co.Decide(at(5)); err != nil {
		t.Fatal(err)
	}
	if info := mustInfo(t, co, "E"); info.Metric != 20*mb || info.Queue != 1 {
		t.Fatalf("after the pilots: x = %v (queue %d), want 20 MB (queue 1)", info.Metric, info.Queue)
	}
	if err := co.FlowCompleted(at(6), FlowCompletion{Flow: FlowRef{"E", 1}, Bytes: 151 * mb}); err != nil {
		t.Fatal(err)
	}
	d, err := co.Decide(at(6))
	if err != nil {
		t.Fatal(err)
	}
	info := mustInfo(t, co, "E")
	if info.Metric != 265*mb || info.Queue != 2 {
		t.Errorf("after a 151 MB flow: x = %v (queue %d), want 265 MB (queue 2)", info.Metric, info.Queue)
	}
	if info.Estimate != 4*mb {
		t.Errorf("the pilots' estimate reported as %v, want 4 MB", info.Estimate)
	}
	if len(d.Grants) != 1 || d.Grants[0].Queue != 2 {
		t.Errorf("grants %+v, want one in queue 2", d.Grants)
	}
}
