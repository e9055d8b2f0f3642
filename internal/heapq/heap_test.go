package heapq

import (
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
