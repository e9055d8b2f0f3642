package coflowsim

import (
	"math"
	"testing"
)

// The reference simulator's coflow-level FIFO and per-flow FAIR (fifo and
// fair-split; see coflow/madd.go and coflow.SplitRate), on cases where they
// differ from a strict one-flow-per-port FIFO and from max-min sharing.
func TestRunCoflowSim_FIFOAndFairDefinitions(t *testing.T) {
	t.Parallel()
	// A at t=0: 0→2 2 MB, 0→3 2 MB; B at t=0: 1→2 1 MB.
	// fifo: A first. Egress 0 carries 4 MB: Γ = 4 s, so MADD caps A's
	// flows at 0.5 MB/s each, leaving 0.5 on ingress 2 and 3. B: ingress
	// 2 has 0.5 left: Γ' = 2 s, cap 0.5. The second pass finds egress 0
	// and ingress 2 full. B ends at t=2, A at t=4. (A strict FIFO that runs
	// one flow per port at line rate would hold B behind A's 0→2 until
	// t=2: CCT(B) = 3.)
	madd := handTrace(4,
		handCoflow{"A", 0, []handFlow{{0, 2, 2}, {0, 3, 2}}},
		handCoflow{"B", 0, []handFlow{{1, 2, 1}}})
	checkCCTs(t, runChecked(t, madd, handConfig("fifo")), map[string]float64{"A": 4, "B": 2})
	// A 0→2, B 0→3, C 1→3, D 4→3, 1 MB each, at t=0.
	// fair-split: ingress 3 splits three ways (1/3 each for B, C, D),
	// egress 0 two ways: A gets min(1/2, 1) = 1/2 and egress 0 idles at
	// 1/6. t=2: A done; B still 1/3 (its ingress), so B, C, D, with 1/3 MB
	// left, end at t=3.
	// fair (max-min): ingress 3's share 1/3 is the smallest, so B, C, D
	// freeze at 1/3 and egress 0 has 2/3 left for A: A ends at t=1.5. B, C,
	// D keep 1/3 (ingress 3 still splits three ways) and end at t=3.
	fair := handTrace(5,
		handCoflow{"A", 0, []handFlow{{0, 2, 1}}},
		handCoflow{"B", 0, []handFlow{{0, 3, 1}}},
		handCoflow{"C", 0, []handFlow{{1, 3, 1}}},
		handCoflow{"D", 0, []handFlow{{4, 3, 1}}})
	checkCCTs(t, runChecked(t, fair, handConfig("fair-split")), map[string]float64{"A": 2, "B": 3, "C": 3, "D": 3})
	checkCCTs(t, runChecked(t, fair, handConfig("fair")), map[string]float64{"A": 1.5, "B": 3, "C": 3, "D": 3})
}

// The fast paths for fair and fair-split (per-link virtual clocks) and for sebf and fifo
// (incremental second pass) must give the CCTs of the plain engine, which
// recomputes coflow.Rates over every flow after every completion.
func TestRunCoflowSim_FastPathsMatchPlainEngine(t *testing.T) {
	t.Parallel()
	tr := fbPrefix(t, 120)
	for _, policy := range []string{"fair", "fair-split", "sebf", "fifo"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			fast := runChecked(t, tr, DefaultConfig().with(policy))
			plain := runPlain(t, tr, DefaultConfig().with(policy))
			if len(fast.Coflows) != len(tr.Coflows) || len(plain.Coflows) != len(tr.Coflows) {
				t.Fatalf("%d and %d coflows finished, want %d", len(fast.Coflows), len(plain.Coflows), len(tr.Coflows))
			}
			for id, p := range plain.Coflows {
				if f := fast.Coflows[id].CCTms; math.Abs(f-p.CCTms) > 1e-6*max(1, p.CCTms) {
					t.Errorf("coflow %s: fast path CCT %v ms, plain engine %v ms", id, f, p.CCTms)
				}
			}
		})
	}
}

func (c Config) with(policy string) Config {
	c.Policy = policy
	return c
}

// runPlain runs without the fast paths.
func runPlain(t *testing.T, tr *Trace, cfg Config) Result {
	t.Helper()
	s := mustEngine(t, tr, cfg)
	s.fair, s.maddMode = nil, false
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return s.result()
}
