package offers

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestPreemptFill_randomTrees checks preemptFill against staticFill, the
// reference, on random weighted trees: weights that make keys tie exactly
// and to within rounding (1 and 3, 0.1 and 0.3), unlimited and counted
// shapes over three resources, running tasks, and clusters from roomy to
// oversubscribed, so that both the runs given in one step and the ties
// settled one task at a time are exercised.
func TestPreemptFill_randomTrees(t *testing.T) {
	t.Parallel()
	weights := []float64{1, 1, 2, 3, 0.1, 0.3, 0.7}
	unwinds := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		a := newAlloc(t, testConfig(PolicyDynamic))
		agents := 1 + r.IntN(6)
		for i := range agents {
			total := protocol.Resources{Scalars: map[string]int64{
				protocol.ResCPUs: int64(4+r.IntN(60)) * 1000, protocol.ResMem: int64(8+r.IntN(120)) * 1024,
				"disk": int64(10 + r.IntN(500))}}
			addAgent(t, a, fmt.Sprintf("a%d", i), total, nil)
		}
		var fws []string
		var grow func(path string, depth int)
		grow = func(path string, depth int) {
			kids := 1 + r.IntN(4)
			for k := range kids {
				p := fmt.Sprintf("%sr%d", path, k)
				must(t, a.SetRole(p, weights[r.IntN(len(weights))]))
				if depth < 2 && r.IntN(3) > 0 {
					grow(p+"/", depth+1)
					continue
				}
				for f := range 1 + r.IntN(2) {
					id := fmt.Sprintf("f%d-%d", f, len(fws))
					addFw(t, a, id, p)
					fws = append(fws, id)
				}
			}
		}
		grow("", 0)
		for _, id := range fws {
			var ds []Demand
			for range r.IntN(3) {
				d := Demand{Resources: protocol.Resources{Scalars: map[string]int64{
					protocol.ResCPUs: int64(1+r.IntN(8)) * 250, protocol.ResMem: int64(1+r.IntN(8)) * 512}}}
				if r.IntN(3) == 0 {
					d.Resources.Scalars["disk"] = int64(1 + r.IntN(20))
				}
				if r.IntN(4) > 0 {
					d.Count = int64(1 + r.IntN(200))
				}
				ds = append(ds, d)
			}
			if len(ds) > 0 {
				demand(t, a, id, ds...)
			}
			for range r.IntN(4) {
				ag := protocol.AgentID(fmt.Sprintf("a%d", r.IntN(agents)))
				_ = a.AddUsage(protocol.FrameworkID(id), ag, cpuMem(int64(1+r.IntN(4))*500, 1024))
			}
		}
		got := a.preemptFairShares()
		want := staticFairShares(a)
		if unwound(t, a, seed) {
			unwinds++
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d nodes with a share, want %d", seed, len(got), len(want))
		}
		for n, v := range want {
			if !vecEqual(got[n], v) {
				t.Fatalf("seed %d: node %q: got %v, want %v", seed, n.path, got[n], v)
			}
		}
	}
	if unwinds < 30 {
		t.Fatalf("only %d of 300 trees were unwound: the test no longer exercises unwind", unwinds)
	}
}

// unwound fills the allocator's fair-share tree both ways where the asks
// are finite and do not all fit: one task at a time from nothing, and by
// unwinding from everything asked first. They must agree on every node.
// It reports whether the tree was unwound.
func unwound(t *testing.T, a *Allocator, seed uint64) bool {
	t.Helper()
	shapesOf := func(f *framework) []fillShape {
		var out []fillShape
		add := func(key string, r vec, n int64) {
			if !r.isZero() && n > 0 {
				out = append(out, fillShape{key: key, res: r, left: n})
			}
		}
		for _, s := range f.shapes {
			add(s.key, s.res, s.count)
		}
		for _, key := range slices.Sorted(maps.Keys(f.launched)) {
			add("run/"+key, f.launchRes[key], f.launched[key])
		}
		return out
	}
	root := buildFill(a.tree.root, nil, 0, shapesOf)
	_, total, ok := asks(root)
	if !ok || a.capacity.fits(total) {
		return false
	}
	slow := fillFrom(buildFill(a.tree.root, nil, 0, shapesOf), a.capacity, false)
	fast := fillFrom(root, a.capacity, true)
	if len(fast) != len(slow) {
		t.Fatalf("seed %d: unwound, %d nodes with a share, want %d", seed, len(fast), len(slow))
	}
	for n, v := range slow {
		if !vecEqual(fast[n], v) {
			t.Fatalf("seed %d: unwound, node %q: got %v, want %v", seed, n.path, fast[n], v)
		}
	}
	return true
}
