package sim

// idHeap is a min-heap of ids by a float key, ties by the smaller id (so
// runs are deterministic), that knows where each id sits: an id's key can
// be changed or the id removed in O(log n) without a search. Ids are
// dense, 0 to the size given to reset.
type idHeap struct {
	items []idKey
	pos   []int32 // per id: index in items, -1 when absent
}

type idKey struct {
	key float64
	id  int32
}

// reset empties the heap for ids 0..n-1.
func (h *idHeap) reset(n int) {
	h.items = h.items[:0]
	if cap(h.pos) < n {
		h.pos = make([]int32, n)
	}
	h.pos = h.pos[:n]
	for i := range h.pos {
		h.pos[i] = -1
	}
}

func (h *idHeap) len() int { return len(h.items) }

// min returns the entry with the smallest key; the heap must not be empty.
func (h *idHeap) min() idKey { return h.items[0] }

// set gives id the key, inserting it if absent.
func (h *idHeap) set(id int32, key float64) {
	i := int(h.pos[id])
	if i < 0 {
		i = len(h.items)
		h.pos[id] = int32(i)
		h.items = append(h.items, idKey{key: key, id: id})
	} else {
		h.items[i].key = key
	}
	h.fix(i)
}

// remove takes id out of the heap if it is there.
func (h *idHeap) remove(id int32) {
	i := int(h.pos[id])
	if i < 0 {
		return
	}
	h.pos[id] = -1
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
		h.pos[h.items[i].id] = int32(i)
	}
	h.items = h.items[:last]
	if i != last {
		h.fix(i)
	}
}

func (h *idHeap) less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.key < b.key || (a.key == b.key && a.id < b.id)
}

func (h *idHeap) swap(i, j int) {
	it := h.items
	it[i], it[j] = it[j], it[i]
	h.pos[it[i].id], h.pos[it[j].id] = int32(i), int32(j)
}

func (h *idHeap) fix(i int) {
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
