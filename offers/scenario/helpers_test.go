package scenario

// Shared fixtures of the scenario tests: tree builders, runs and the
// comparison of task counts. The independent static H-DRF oracle
// (docs/hdrf.md, discrete, exact rationals) is in oracle_static_test.go, the
// hierarchical share guarantee in guarantee_oracle_test.go, the random-tree
// generator in random_trees_test.go, the invariant checks (capacity, Pareto
// efficiency P5) in invariants_test.go and the dynamic H-DRF oracle in
// oracle_dynamic_test.go.

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-project/allot/offers"
)

// res is a resource vector by name.
type res = map[string]int64

// oracle is a pseudo-policy for example tables: the expected values are
// computed by staticOracle instead of the allocator.
const oracle offers.Policy = "oracle"

// hdrf are the policies that implement H-DRF (static target, dynamic rules).
var hdrf = []offers.Policy{offers.PolicyStatic, offers.PolicyDynamic, offers.PolicyPaper}

// lf is a leaf with weight 1 and unlimited tasks.
func lf(name string, d res) Node { return Node{Name: name, Demand: d, Tasks: offers.Unlimited} }

// lfw is a weighted leaf with unlimited tasks.
func lfw(name string, w float64, d res) Node {
	return Node{Name: name, Weight: w, Demand: d, Tasks: offers.Unlimited}
}

// grp is a role.
func grp(name string, w float64, children ...Node) Node {
	return Node{Name: name, Weight: w, Children: children}
}

// tree is a spec with one agent.
func tree(capacity res, children ...Node) Spec {
	return Spec{Capacity: capacity, Root: Node{Children: children}}
}

// without returns a deep copy of s with the named nodes (and any role left
// without children) removed.
func without(s Spec, names ...string) Spec {
	var prune func(n Node) (Node, bool)
	prune = func(n Node) (Node, bool) {
		if slices.Contains(names, n.Name) {
			return Node{}, false
		}
		out := n
		if len(n.Children) == 0 {
			return out, true
		}
		out.Children = nil
		for _, c := range n.Children {
			if pc, ok := prune(c); ok {
				out.Children = append(out.Children, pc)
			}
		}
		return out, len(out.Children) > 0
	}
	root, _ := prune(s.Root)
	s.Root = root
	return s
}

// leafNodes returns the leaves of s in tree order.
func leafNodes(s Spec) []Node {
	var out []Node
	var walk func(n Node)
	walk = func(n Node) {
		if len(n.Children) == 0 {
			out = append(out, n)
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, c := range s.Root.Children {
		walk(c)
	}
	return out
}

// mustRun loads s under p and runs the initial fill.
func mustRun(t testing.TB, s Spec, p offers.Policy) *Run {
	t.Helper()
	r, err := New(s, p)
	if err != nil {
		t.Fatalf("New(%s): %v", p, err)
	}
	if _, err := r.Fill(); err != nil {
		t.Fatalf("Fill(%s): %v", p, err)
	}
	return r
}

func mustChurn(t testing.TB, r *Run, n int, seed uint64) {
	t.Helper()
	if err := r.Churn(n, seed); err != nil {
		t.Fatalf("Churn: %v", err)
	}
}

// counts returns the running tasks of every leaf in tree order.
func counts(r *Run) []int64 {
	out := make([]int64, 0, len(r.Leaves()))
	for _, l := range r.Leaves() {
		out = append(out, r.Tasks(l))
	}
	return out
}

func fmtCounts(c []int64) string {
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, "/")
}

func fmtAlts(alts [][]int64) string {
	parts := make([]string, len(alts))
	for i, a := range alts {
		parts[i] = fmtCounts(a)
	}
	return strings.Join(parts, " or ")
}

func matchesAny(got []int64, alts [][]int64) bool {
	for _, a := range alts {
		if slices.Equal(got, a) {
			return true
		}
	}
	return false
}

// maxDiff reports the largest per-leaf difference between a and b.
func maxDiff(a, b []int64) int64 {
	var d int64
	for i := range a {
		d = max(d, abs64(a[i]-b[i]))
	}
	return d
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// completeWhere ends one running task chosen uniformly (with rng) among
// those of leaves accepted by keep, without refilling. It reports the leaf,
// or "" when no running task qualifies. It reads the run's task list, which
// the exported API does not expose.
func completeWhere(t testing.TB, r *Run, rng *rand.Rand, keep func(leaf string) bool) string {
	t.Helper()
	var idx []int
	for i, rt := range r.running {
		if keep == nil || keep(rt.leaf) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return ""
	}
	i := idx[rng.IntN(len(idx))]
	leaf := r.running[i].leaf
	if err := r.Complete(i); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	return leaf
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1)) }
