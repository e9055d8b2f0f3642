package coflow

import (
	"math"
	"testing"
	"time"
)

// threeCoflows is the shared set of the single-order baselines, on ports
// 0..3 at 1 MB/s:
//
//	A at t=0: 0→2 4 MB, 1→3 2 MB   (total 6, bottleneck 4)
//	B at t=1: 0→3 1 MB             (total 1)
//	C at t=2: 1→2 2 MB             (total 2)
var threeCoflows = []testCoflow{
	{id: "A", arrival: 0, flows: []flowMB{{0, 2, 4}, {1, 3, 2}}},
	{id: "B", arrival: 1, flows: []flowMB{{0, 3, 1}}},
	{id: "C", arrival: 2, flows: []flowMB{{1, 2, 2}}},
}

func TestFIFO_ThreeCoflows(t *testing.T) {
	// Order A, B, C throughout.
	// t=0: A's 0→2 and 1→3 both at 1 MB/s.
	// t=1: B arrives; its 0→3 needs egress 0, held by A's 0→2: waits.
	// t=2: A's 1→3 done (2 MB). C arrives; its 1→2 needs ingress 2, held by
	//      A's 0→2: waits. Egress 1 idles: nothing else can use it.
	// t=4: A's 0→2 done: CCT(A) = 4. B's 0→3 and C's 1→2 start.
	// t=5: B done: CCT(B) = 5−1 = 4.  t=6: C done: CCT(C) = 6−2 = 4.
	res := runFluid(t, testConfig(SchedulerFIFO, 4), threeCoflows, fluidOpts{})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 4, "B": 4, "C": 4})
}

func TestSCF_ThreeCoflows(t *testing.T) {
	// Order by total size: B(1) < C(2) < A(6).
	// t=0: A alone, both flows at 1.
	// t=1: B first: 0→3 takes egress 0 and ingress 3, which blocks both of
	//      A's flows (0→2 on egress 0, 1→3 on ingress 3). A has 3 MB left on
	//      0→2 and 1 MB on 1→3.
	// t=2: B done: CCT(B) = 1. C arrives, first: 1→2 takes egress 1 and
	//      ingress 2, again blocking both of A's flows.
	// t=4: C done: CCT(C) = 2. A resumes: 1→3 done at t=5, 0→2 at t=7:
	//      CCT(A) = 7.
	res := runFluid(t, testConfig(SchedulerSCF, 4), threeCoflows, fluidOpts{reportEachDecision: true})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 7, "B": 1, "C": 2})
}

func TestSEBF_BottleneckBeatsTotalSize(t *testing.T) {
	// X at t=0: 0→2 2 MB, 1→3 2 MB   (total 4, bottleneck Γ = 2 s)
	// Y at t=0: 0→3 3 MB             (total 3, Γ = 3 s)
	// scf runs Y first (3 < 4): Y's 0→3 blocks both of X's flows until
	//   t=3, then X runs 3..5: CCT(Y) = 3, CCT(X) = 5.
	// sebf runs X first (2 < 3): MADD gives X's flows 2/2 = 1 MB/s each;
	//   Y's egress 0 is full, so Y waits: CCT(X) = 2, then Y 2..5: CCT(Y) = 5.
	set := []testCoflow{
		{id: "X", flows: []flowMB{{0, 2, 2}, {1, 3, 2}}},
		{id: "Y", flows: []flowMB{{0, 3, 3}}},
	}
	scf := runFluid(t, testConfig(SchedulerSCF, 4), set, fluidOpts{reportEachDecision: true})
	checkCCT(t, scf.cct, map[CoflowID]float64{"X": 5, "Y": 3})
	sebf := runFluid(t, testConfig(SchedulerSEBF, 4), set, fluidOpts{reportEachDecision: true})
	checkCCT(t, sebf.cct, map[CoflowID]float64{"X": 2, "Y": 5})
}

func TestSEBF_MADDFinishesFlowsTogether(t *testing.T) {
	// X at t=0: 0→2 2 MB, 1→2 1 MB   (ingress 2 carries 3 MB: Γ = 3 s)
	// Y at t=0: 1→3 4 MB             (Γ = 4 s)
	// X first. MADD: Γ' = 3, so 0→2 gets 2/3 and 1→2 gets 1/3 MB/s; both
	// finish at t=3 (CCT(X) = 3). Y: egress 1 has 2/3 left, so Γ' = 4/(2/3)
	// = 6 and 1→3 gets 2/3. Backfill finds nothing: ingress 2 and egress 1
	// are full. At t=3 Y has 2 MB left, alone at 1 MB/s: CCT(Y) = 5.
	// (scf, greedy by size 3 < 4, gets the same CCTs but finishes X's 0→2 at
	// t=2 and 1→2 at t=3.)
	set := []testCoflow{
		{id: "X", flows: []flowMB{{0, 2, 2}, {1, 2, 1}}},
		{id: "Y", flows: []flowMB{{1, 3, 4}}},
	}
	res := runFluid(t, testConfig(SchedulerSEBF, 4), set, fluidOpts{reportEachDecision: true})
	checkCCT(t, res.cct, map[CoflowID]float64{"X": 3, "Y": 5})
	for f, want := range map[int]float64{0: 3, 1: 3} {
		if got := res.finish["X"][f]; math.Abs(got-want) > 1e-6 {
			t.Errorf("X flow %d finished at %v, want %v", f, got, want)
		}
	}
	scf := runFluid(t, testConfig(SchedulerSCF, 4), set, fluidOpts{reportEachDecision: true})
	if got := scf.finish["X"][0]; math.Abs(got-2) > 1e-6 {
		t.Errorf("scf: X flow 0 finished at %v, want 2", got)
	}
}

func TestFair_MaxMin(t *testing.T) {
	// A at t=0: 0→2 3 MB; B at t=0: 1→2 1 MB; C at t=0: 0→1 2 MB.
	// Egress 0 carries A and C, ingress 2 carries A and B.
	// t=0: progressive filling: egress 0 and ingress 2 both offer 1/2; egress
	//      0 (lower side index) freezes A and C at 1/2; ingress 2 then has 1/2
	//      left for B alone. All three at 1/2.
	// t=2: B done (1 MB): CCT(B) = 2. A and C still share egress 0 at 1/2.
	// t=4: C done (2 MB): CCT(C) = 4. A has sent 2 of 3 MB, alone at 1.
	// t=5: CCT(A) = 5.
	set := []testCoflow{
		{id: "A", flows: []flowMB{{0, 2, 3}}},
		{id: "B", flows: []flowMB{{1, 2, 1}}},
		{id: "C", flows: []flowMB{{0, 1, 2}}},
	}
	res := runFluid(t, testConfig(SchedulerFair, 3), set, fluidOpts{})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 5, "B": 2, "C": 4})
	// Recomputed at t=0 (arrivals), t=2 (B done) and t=4 (C done); flow
	// completions alone leave the decision as it is and Rates re-shares.
	if res.epochs != 3 {
		t.Errorf("recomputes: %d, want 3", res.epochs)
	}
}

// aaloSet: A at t=0: 0→1 5 MB; B at t=1: 0→2 1 MB. Queue 0 ends at 2 MB.
var aaloSet = []testCoflow{
	{id: "A", flows: []flowMB{{0, 1, 5}}},
	{id: "B", arrival: 1, flows: []flowMB{{0, 2, 1}}},
}

func aaloConfig(s Scheduler) Config {
	cfg := testConfig(s, 3)
	cfg.FirstQueueLimit = 2 * mb
	return cfg
}

func TestAalo_DemotesOnReportedBytes(t *testing.T) {
	// Reports every 1 s. Queue 0 is [0, 2 MB), queue 1 [2, 20 MB).
	// t=0: A enters Q0 and sends at 1 MB/s.
	// t=1: report: A sent 1 MB < 2: stays. B enters Q0 behind A (FIFO) and
	//      waits for egress 0.
	// t=2: report: A sent 2 MB ≥ 2: demoted to Q1. B (Q0) goes first.
	// t=3: B done: CCT(B) = 2. A resumes with 3 MB left: done at t=6,
	//      CCT(A) = 6. (FIFO would give A 5 and B 5.)
	res := runFluid(t, aaloConfig(SchedulerAalo), aaloSet, fluidOpts{reportEvery: 1})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 6, "B": 2})
	if q := res.info["A"].Queue; q != 1 {
		t.Errorf("A ended in queue %d, want 1", q)
	}
	fifo := runFluid(t, testConfig(SchedulerFIFO, 3), aaloSet, fluidOpts{})
	checkCCT(t, fifo.cct, map[CoflowID]float64{"A": 5, "B": 5})
}

func TestAaloOracle_StartsInFinalQueue(t *testing.T) {
	// A (5 MB) starts in Q1, B (1 MB) in Q0.
	// t=0: A alone; the round is planned with Q1 on top.
	// t=1: B enters Q0, above every queue of the round: the round is
	//      replanned with Q0 on top. B runs at once: CCT(B) = 1.
	// t=2: A resumes with 4 MB left: CCT(A) = 6.
	res := runFluid(t, aaloConfig(SchedulerAaloOracle), aaloSet, fluidOpts{reportEvery: 1})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 6, "B": 1})
}

func TestAalo_SlotPlanStarvationFreedom(t *testing.T) {
	// aalo-oracle with W = 4 slots per round, w = 2, δ = 1 s: a round gives
	// the top non-empty queue 4 slots and the next one 2.
	// Q0 is [0, 10 MB), Q1 [10, 100 MB). S: 0→2 8 MB (Q0); L: 0→1 50 MB (Q1),
	// both at t=0, sharing egress 0.
	// t=0..4:  Q0's block: S sends 4 MB.
	// t=4..6:  Q1's block: L sends 2 MB (S waits: strict priority would
	//          have starved L until t=8).
	// t=6:     round used up, replanned: Q0 4 slots, Q1 2.
	// t=6..10: S sends its last 4 MB: CCT(S) = 10.
	// t=10:    L alone, 48 MB left: CCT(L) = 58.
	cfg := testConfig(SchedulerAaloOracle, 3)
	cfg.SlotsPerRound, cfg.WeightRatio, cfg.Slot = 4, 2, time.Second
	set := []testCoflow{
		{id: "S", flows: []flowMB{{0, 2, 8}}},
		{id: "L", flows: []flowMB{{0, 1, 50}}},
	}
	var working []int
	res := runFluid(t, cfg, set, fluidOpts{onDecide: func(sec float64, d *Decision) {
		if sec < 10 {
			working = append(working, d.WorkingQueue)
		}
	}})
	checkCCT(t, res.cct, map[CoflowID]float64{"S": 10, "L": 58})
	// Decisions at t=0 (Q0 until 4), t=4 (Q1 until 6), t=6 (Q0 until 10).
	if want := []int{0, 1, 0}; !equalInts(working, want) {
		t.Errorf("working queues before t=10: %v, want %v", working, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
