package heapq

// IDHeap is a min-heap of IDs by a float key, ties by the smaller ID (so
// runs are deterministic), that knows where each ID sits: an ID's key can
// be changed or the ID removed in O(log n) without a search. IDs are
// dense, 0 to the size given to Reset.
type IDHeap struct {
	items []IDKey
	pos   []int32 // per ID: index in items, -1 when absent
}

// IDKey is an ID with its key.
type IDKey struct {
	Key float64
	ID  int32
}

// Reset empties the heap for IDs 0..n-1.
func (h *IDHeap) Reset(n int) {
	h.items = h.items[:0]
	if cap(h.pos) < n {
		h.pos = make([]int32, n)
	}
	h.pos = h.pos[:n]
	for i := range h.pos {
		h.pos[i] = -1
	}
}

// Len is the number of IDs in the heap.
func (h *IDHeap) Len() int { return len(h.items) }

// Min returns the entry with the smallest key; the heap must not be empty.
func (h *IDHeap) Min() IDKey { return h.items[0] }

// Set gives id the key, inserting it if absent.
func (h *IDHeap) Set(id int32, key float64) {
	i := int(h.pos[id])
	if i < 0 {
		i = len(h.items)
		h.pos[id] = int32(i)
		h.items = append(h.items, IDKey{Key: key, ID: id})
	} else {
		h.items[i].Key = key
	}
	h.fix(i)
}

// Remove takes id out of the heap if it is there.
func (h *IDHeap) Remove(id int32) {
	i := int(h.pos[id])
	if i < 0 {
		return
	}
	h.pos[id] = -1
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
		h.pos[h.items[i].ID] = int32(i)
	}
	h.items = h.items[:last]
	if i != last {
		h.fix(i)
	}
}

func (h *IDHeap) less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.Key < b.Key || (a.Key == b.Key && a.ID < b.ID)
}

func (h *IDHeap) swap(i, j int) {
	it := h.items
	it[i], it[j] = it[j], it[i]
	h.pos[it[i].ID], h.pos[it[j].ID] = int32(i), int32(j)
}

func (h *IDHeap) fix(i int) {
	moved := false
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h.swap(i, parent)
		i, moved = parent, true
	}
	if moved {
		return
	}
	n := len(h.items)
	for {
		small := i
		if l := 2*i + 1; l < n && h.less(l, small) {
			small = l
		}
		if r := 2*i + 2; r < n && h.less(r, small) {
			small = r
		}
		if small == i {
			return
		}
		h.swap(i, small)
		i = small
	}
}
