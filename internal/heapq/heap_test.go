package heapq

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHeap_popsInOrder: whatever is pushed, in whatever order and
// interleaved with pops, comes out least first; Peek shows what Pop
// returns; Reset empties.
func TestHeap_popsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		h := New(func(a, b int) bool { return a < b })
		var model []int
		for range rng.IntN(300) {
			if len(model) > 0 && rng.IntN(3) == 0 {
				slices.Sort(model)
				peek, ok := h.Peek()
				if got := h.Pop(); !ok || got != model[0] || peek != got {
					t.Fatalf("round %d: pop %d (peek %d, %v), want %d", round, got, peek, ok, model[0])
				}
				model = model[1:]
				continue
			}
			x := rng.IntN(50)
			h.Push(x)
			model = append(model, x)
		}
		if h.Len() != len(model) {
			t.Fatalf("round %d: len %d, want %d", round, h.Len(), len(model))
		}
		slices.Sort(model)
		for _, want := range model {
			if got := h.Pop(); got != want {
				t.Fatalf("round %d: drained %d, want %d", round, got, want)
			}
		}
		if _, ok := h.Peek(); ok || h.Len() != 0 {
			t.Fatalf("round %d: not empty after draining", round)
		}
	}
	h := New(func(a, b string) bool { return a > b }) // a max-heap by its less
	for _, s := range []string{"b", "c", "a"} {
		h.Push(s)
	}
	if got := h.Pop(); got != "c" {
		t.Errorf("max-heap popped %q, want c", got)
	}
	h.Reset()
	if h.Len() != 0 || len(h.Items()) != 0 {
		t.Errorf("after Reset: len %d", h.Len())
	}
}

// TestIDHeap_setAndRemove: keys set, changed and removed in any order
// leave the heap giving the least key (ties by the smaller ID), and
// removing an absent ID changes nothing.
func TestIDHeap_setAndRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 40
	var h IDHeap
	for round := range 200 {
		h.Reset(n)
		model := map[int32]float64{}
		for range rng.IntN(400) {
			id := int32(rng.IntN(n))
			if rng.IntN(4) == 0 {
				h.Remove(id)
				delete(model, id)
			} else {
				key := float64(rng.IntN(20))
				h.Set(id, key)
				model[id] = key
			}
			if h.Len() != len(model) {
				t.Fatalf("round %d: len %d, want %d", round, h.Len(), len(model))
			}
			if len(model) == 0 {
				continue
			}
			want := IDKey{ID: -1}
			for id, key := range model {
				if want.ID < 0 || key < want.Key || (key == want.Key && id < want.ID) {
					want = IDKey{Key: key, ID: id}
				}
			}
			if got := h.Min(); got != want {
				t.Fatalf("round %d: min %+v, want %+v", round, got, want)
			}
		}
	}
}

// TestSlice_initFixPop: a slice filled and then made a heap, with items
// changed in place and fixed, always has its least item on top; Pop
// takes it, and what is popped between changes comes out in order.
func TestSlice_initFixPop(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	less := func(a, b int) bool { return a < b }
	for round := range 200 {
		s := make([]int, rng.IntN(100))
		for i := range s {
			s[i] = rng.IntN(30)
		}
		Init(s, less)
		var got []int
		for len(s) > 0 {
			if rng.IntN(3) == 0 {
				s[0] += rng.IntN(10) // the top changes in place
				Fix(s, 0, less)
				got = got[:0]
				continue
			}
			if k := rng.IntN(len(s)); rng.IntN(4) == 0 {
				s[k] -= rng.IntN(5) // any item lowered in place
				Fix(s, k, less)
				got = got[:0]
				continue
			}
			got = append(got, s[0])
			for i := 1; i < len(s); i++ {
				if less(s[i], s[0]) {
					t.Fatalf("round %d: %d below the top %d", round, s[i], s[0])
				}
			}
			s = Pop(s, less)
			if !slices.IsSorted(got) {
				t.Fatalf("round %d: popped %v, not in order", round, got)
			}
		}
		s = Push(s, 3, less)
		s = Push(s, 1, less)
		if s[0] != 1 || len(s) != 2 {
			t.Fatalf("round %d: after two pushes %v", round, s)
		}
	}
}

// TestTimeline: values come out by time, those of one time by sequence,
// whatever order they were pushed in; Reset empties it.
func TestTimeline(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var h Timeline[int]
	type key struct {
		at  float64
		seq uint64
	}
	for round := range 100 {
		var want []key
		for i := range rng.IntN(200) {
			k := key{at: float64(rng.IntN(20)), seq: uint64(rng.IntN(1000))*1000 + uint64(i)}
			h.Push(k.at, k.seq, int(k.seq))
			want = append(want, k)
		}
		slices.SortFunc(want, func(a, b key) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return cmp.Compare(a.seq, b.seq)
		})
		for _, w := range want {
			got := h.Pop()
			if got.At != w.at || got.Seq != w.seq || got.Value != int(w.seq) {
				t.Fatalf("round %d: popped %+v, want %+v", round, got, w)
			}
		}
		if h.Len() != 0 {
			t.Fatalf("round %d: %d left", round, h.Len())
		}
	}
	h.Push(1, 1, 1)
	h.Reset()
	if h.Len() != 0 {
		t.Error("Reset left values")
	}
}
