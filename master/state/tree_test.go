package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestTree_againstMap applies random sets and deletes to a tree and a map
// and compares them, and checks that every older version of the tree is
// unchanged by later writes. Writes come in "commands" of 50 under one edit
// token, as the state makes them, so the in-place edits are covered too.
func TestTree_againstMap(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var tr tree[int]
	m := map[string]int{}
	type version struct {
		t tree[int]
		m map[string]int
	}
	var versions []version
	for i := range 5000 {
		if i%500 == 0 {
			versions = append(versions, version{tr, maps.Clone(m)})
		}
		if i%50 == 0 {
			tr.edit = new(editToken)
		}
		k := fmt.Sprintf("k%03d", r.IntN(400))
		if r.IntN(3) == 0 {
			tr = tr.delete(k)
			delete(m, k)
		} else {
			tr = tr.set(k, i)
			m[k] = i
		}
	}
	versions = append(versions, version{tr, m})
	for i, v := range versions {
		if v.t.Len() != len(v.m) {
			t.Fatalf("version %d: got len %d, want %d", i, v.t.Len(), len(v.m))
		}
		var gotKeys []string
		v.t.ascend("", "", func(k string, val int) bool {
			gotKeys = append(gotKeys, k)
			if v.m[k] != val {
				t.Fatalf("version %d: key %s: got %d, want %d", i, k, val, v.m[k])
			}
			return true
		})
		if want := slices.Sorted(maps.Keys(v.m)); !slices.Equal(gotKeys, want) {
			t.Fatalf("version %d: got keys %v, want %v", i, gotKeys, want)
		}
		for k, want := range v.m {
			if got, ok := v.t.get(k); !ok || got != want {
				t.Fatalf("version %d: get(%s) = %d %v, want %d", i, k, got, ok, want)
			}
		}
		if _, ok := v.t.get("missing"); ok {
			t.Fatalf("version %d: got a missing key", i)
		}
	}
}

func TestTree_ascendRange(t *testing.T) {
	t.Parallel()
	var tr tree[string]
	for _, k := range []string{
		taskKey("fw", "a"), taskKey("fw", "b"), taskKey("fw-2", "a"), taskKey("fwA", "x"),
		taskKey("f", "z"), taskKey("fw.", "y"),
	} {
		tr = tr.set(k, k)
	}
	lo, hi := prefixRange("fw")
	got := tr.values(lo, hi)
	want := []string{taskKey("fw", "a"), taskKey("fw", "b")}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Early stop.
	n := 0
	tr.ascend("", "", func(string, string) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("got %d calls, want 3", n)
	}
	if got := tr.values("g", ""); len(got) != 0 {
		t.Errorf("got %q past the last key, want none", got)
	}
	all := tr.values("", "")
	if !slices.IsSortedFunc(all, strings.Compare) || len(all) != 6 {
		t.Errorf("got %q, want 6 sorted keys", all)
	}
}

// TestTree_ascendBounds: ascend includes a key equal to lo and stops
// before a key equal to hi. It fails with either bound compared strictly
// the other way.
func TestTree_ascendBounds(t *testing.T) {
	t.Parallel()
	var tr tree[string]
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		tr = tr.set(k, k)
	}
	if got, want := tr.values("b", "d"), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("[b, d): got %q, want %q", got, want)
	}
	if got, want := tr.values("e", ""), []string{"e"}; !slices.Equal(got, want) {
		t.Errorf("[e, ∞): got %q, want %q", got, want)
	}
}

// TestTree_unsharedWithoutToken: a tree written without an edit token
// (as restores and tests make them) copies every node it changes, so the
// version it came from keeps its values. It fails with own reusing a node
// when neither it nor the write has a token.
func TestTree_unsharedWithoutToken(t *testing.T) {
	t.Parallel()
	var before tree[int]
	for i, k := range []string{"a", "b", "c"} {
		before = before.set(k, i)
	}
	after := before.set("a", 9).delete("b")
	if v, _ := before.get("a"); v != 0 {
		t.Errorf("the earlier version's a is %d, want 0", v)
	}
	if _, ok := before.get("b"); !ok || before.Len() != 3 {
		t.Errorf("the earlier version lost b: %v, %d keys", ok, before.Len())
	}
	if v, _ := after.get("a"); v != 9 || after.Len() != 2 {
		t.Errorf("the later version: a %d, %d keys", v, after.Len())
	}
}

// TestTree_balanced: keys inserted in order still make a tree of
// logarithmic depth, as the random priorities keep it a treap. It fails
// with inserts that ignore the priorities (a new key always made a leaf:
// a list). Inverting the heap order is no bug: a treap ordered the other
// way on random priorities is as balanced.
func TestTree_balanced(t *testing.T) {
	t.Parallel()
	var tr tree[int]
	tr.edit = new(editToken)
	const n = 4096
	for i := range n {
		tr = tr.set(fmt.Sprintf("k%05d", i), i)
	}
	var depth func(*node[int]) int
	depth = func(nd *node[int]) int {
		if nd == nil {
			return 0
		}
		return 1 + max(depth(nd.left), depth(nd.right))
	}
	// A treap of 4,096 keys is about 2·ln(4096) ≈ 17 deep on average;
	// 60 leaves room for any seed of the priorities.
	if d := depth(tr.root); d > 60 {
		t.Errorf("depth %d for %d keys inserted in order", d, n)
	}
	for i := range n {
		tr = tr.delete(fmt.Sprintf("k%05d", i))
		if i == n/2 {
			if d := depth(tr.root); d > 60 {
				t.Errorf("depth %d after deleting half in order", d)
			}
		}
	}
}
