package scenario

// Property tests of docs/hdrf.md on random trees, bounded as those of
// property_test.go: the share guarantee, Pareto efficiency and capacity.

import (
	"fmt"
	"testing"

	"github.com/allot-project/allot/offers"
)

// TestP4_HierarchicalShareGuarantee: every demanding node's dominant share
// of its plain-sum allocation is at least g_L minus one task, on random
// trees with demands up to 3 units: under static with the node's own task,
// under dynamic (fill, then churn) with the largest task among its
// siblings (whole-task granularity of rescaling).
func TestP4_HierarchicalShareGuarantee(t *testing.T) {
	for seed := uint64(0); seed < propTreesP4; seed++ {
		s := mixedTree(2000 + seed)
		for _, v := range guaranteeViolations(s, mustRun(t, s, offers.PolicyStatic), false) {
			t.Errorf("seed %d static: %s", seed, v)
		}
		r := mustRun(t, s, offers.PolicyDynamic)
		for _, v := range guaranteeViolations(s, r, true) {
			t.Errorf("seed %d dynamic fill: %s", seed, v)
		}
		mustChurn(t, r, propChurn, seed)
		for _, v := range guaranteeViolations(s, r, true) {
			t.Errorf("seed %d (depth %d) dynamic after %d completions: %s", seed, depth(s.Root), propChurn, v)
		}
	}
}

// TestP4_GuaranteeClosedForm checks g_L on the H-DRF paper's Figure 2: 1/2, 1/10,
// 1/5, 1/5 of the cluster; without n2,3 1/2, 1/6, 1/3.
func TestP4_GuaranteeClosedForm(t *testing.T) {
	all := func(Node) bool { return true }
	get := func(gs []guaranteeNode, name string) float64 {
		for _, g := range gs {
			if g.name == name {
				return g.g
			}
		}
		t.Fatalf("no node %s", name)
		return 0
	}
	gs := guarantees(fig2(), all)
	for name, w := range map[string]float64{"n1.1": 0.5, "n2.1": 0.1, "n2.2.1": 0.2, "n2.3": 0.2, "n2": 0.5} {
		if got := get(gs, name); !near(got, w) {
			t.Errorf("g(%s) got %v, want %v", name, got, w)
		}
	}
	gs = guarantees(fig2(), func(n Node) bool { return n.Name != "n2.3" })
	for name, w := range map[string]float64{"n1.1": 0.5, "n2.1": 1.0 / 6, "n2.2.1": 1.0 / 3, "n2.3": 0} {
		if got := get(gs, name); !near(got, w) {
			t.Errorf("without n2.3: g(%s) got %v, want %v", name, got, w)
		}
	}
}

// TestP5_ParetoEfficiency: after every fill (initial and after each churn
// completion), no leaf with pending tasks has a task that fits the free
// resources of any agent, for every policy, with 3 and 10 agents.
func TestP5_ParetoEfficiency(t *testing.T) {
	for _, agents := range []int{3, 10} {
		for seed := uint64(0); seed < propTreesP5; seed++ {
			s := randomSpec(newRNG(3000+seed), genOpts{minCap: 60, maxCap: 120, maxDepth: 3, agents: agents})
			for _, p := range offers.Policies() {
				label := fmt.Sprintf("agents %d seed %d %s", agents, seed, p)
				r := mustRun(t, s, p)
				if !checkInvariants(t, label+" fill", s, r, nil) {
					continue
				}
				n := 40
				if p == offers.PolicyStatic {
					n = 15
				}
				churnChecked(t, label, s, r, n, seed)
			}
		}
	}
}

// TestCapacity_NeverExceeded: with some leaves bounded (finite task
// counts), on 1-4 agents, under every policy, no agent ever runs more than
// its capacity, the tree's shares stay within capacity and no offer is left
// outstanding after a fill.
func TestCapacity_NeverExceeded(t *testing.T) {
	for seed := uint64(0); seed < 8; seed++ {
		rng := newRNG(4000 + seed)
		s := randomSpec(rng, genOpts{minCap: 20, maxCap: 60, maxDepth: 3, agents: 1 + rng.IntN(4)})
		bound(&s.Root, func() int64 {
			if rng.IntN(3) == 0 {
				return rng.Int64N(12)
			}
			return offers.Unlimited
		})
		for _, p := range offers.Policies() {
			label := fmt.Sprintf("seed %d %s (agents %d)", seed, p, s.Agents)
			r := mustRun(t, s, p)
			if checkInvariants(t, label+" fill", s, r, nil) {
				churnChecked(t, label, s, r, 40, seed)
			}
		}
	}
}

// bound sets every leaf's task count from f.
func bound(n *Node, f func() int64) {
	if len(n.Children) == 0 {
		n.Tasks = f()
		return
	}
	for i := range n.Children {
		bound(&n.Children[i], f)
	}
}
