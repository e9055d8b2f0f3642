package coflowsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Max-min on 3 ports, where a flow bottlenecked at its ingress leaves part
// of its egress to another flow. A 0→2 1 MB, B 1→2 1 MB, C 1→2 1 MB (B and
// C share a link), D 0→1 3 MB, all at t=0, every side 1 MB/s.
//
// fair: shares at t=0 are ingress 2 1/3 (A, B, C), egress 0 1/2 (A, D),
// egress 1 1/2 (B, C), ingress 1 1 (D). Ingress 2 is the smallest: A, B, C
// freeze at 1/3, leaving egress 0 2/3 for D alone (ingress 1 allows 1), so
// D sends at 2/3. t=3: A, B, C have sent 1 MB and end; D has 3 − 2 = 1 MB
// left, alone at 1: it ends at t=4.
//
// fair-split: D = min(1/2, 1) = 1/2. t=3: A, B, C end, D has 1.5 MB left
// and ends at 4.5.
//
// A second wave on idle ports: E 2→0 2 MB and F 2→1 2 MB at t=10 share
// egress 2 at 1/2 each and end at t=14 (CCT 4) under both policies.
func TestRunCoflowSim_FairIsMaxMin(t *testing.T) {
	t.Parallel()
	tr := handTrace(3,
		handCoflow{"A", 0, []handFlow{{0, 2, 1}}},
		handCoflow{"B", 0, []handFlow{{1, 2, 1}}},
		handCoflow{"C", 0, []handFlow{{1, 2, 1}}},
		handCoflow{"D", 0, []handFlow{{0, 1, 3}}},
		handCoflow{"E", 10, []handFlow{{2, 0, 2}}},
		handCoflow{"F", 10, []handFlow{{2, 1, 2}}})
	checkCCTs(t, runChecked(t, tr, handConfig("fair")),
		map[string]float64{"A": 3, "B": 3, "C": 3, "D": 4, "E": 4, "F": 4})
	checkCCTs(t, runChecked(t, tr, handConfig("fair-split")),
		map[string]float64{"A": 3, "B": 3, "C": 3, "D": 4.5, "E": 4, "F": 4})
}

// On random small traces the max-min fast path (link-level progressive
// filling in the touched components, per-link virtual clocks) gives
// coflow.Rates' max-min rates at every step (runChecked) and the plain
// engine's CCTs. Sizes are whole or half MB and arrivals whole seconds, so
// many flows end at the same instant.
func TestRunCoflowSim_MaxMinFastPathRandom(t *testing.T) {
	t.Parallel()
	for seed := range 150 {
		tr := randomHandTrace(uint64(seed))
		for _, policy := range []string{"fair", "fair-split"} {
			fast := runChecked(t, tr, handConfig(policy))
			plain := runPlain(t, tr, handConfig(policy))
			for id, p := range plain.Coflows {
				if f := fast.Coflows[id].CCTms; math.Abs(f-p.CCTms) > 1e-6*max(1, p.CCTms) {
					t.Errorf("seed %d %s: coflow %s: fast path CCT %v ms, plain engine %v ms", seed, policy, id, f, p.CCTms)
				}
			}
			if len(fast.Coflows) != len(tr.Coflows) || fast.Load.Completions != tr.Shape().Flows {
				t.Errorf("seed %d %s: %d coflows, %d completions; want %d, %d", seed, policy,
					len(fast.Coflows), fast.Load.Completions, len(tr.Coflows), tr.Shape().Flows)
			}
		}
	}
}

func randomHandTrace(seed uint64) *Trace {
	rng := rand.New(rand.NewPCG(seed, 7))
	ports := 2 + rng.IntN(5)
	var cs []handCoflow
	arrival := 0.0
	for i := range 2 + rng.IntN(7) {
		arrival += float64(rng.IntN(3))
		c := handCoflow{id: fmt.Sprint("c", i), arrival: arrival}
		used := map[[2]int]bool{}
		for range 1 + rng.IntN(6) {
			l := [2]int{rng.IntN(ports), rng.IntN(ports)}
			if !used[l] {
				used[l] = true
				c.flows = append(c.flows, handFlow{src: l[0], dst: l[1], mb: float64(1+rng.IntN(6)) / 2})
			}
		}
		cs = append(cs, c)
	}
	return handTrace(ports, cs...)
}
