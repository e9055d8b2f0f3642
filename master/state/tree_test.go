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
