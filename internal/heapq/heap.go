package heapq

// Heap is a min-heap of T under less. The zero Heap is not usable: make
// one with New.
type Heap[T any] struct {
	items []T
	less  func(a, b T) bool
}

// New returns an empty heap ordered by less (a before b when less(a, b)).
func New[T any](less func(a, b T) bool) *Heap[T] { return &Heap[T]{less: less} }

// Len is the number of items.
func (h *Heap[T]) Len() int { return len(h.items) }

// Push adds x.
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

// Peek returns the least item without removing it; ok is false when the
// heap is empty.
func (h *Heap[T]) Peek() (x T, ok bool) {
	if len(h.items) == 0 {
		return x, false
	}
	return h.items[0], true
}

// Pop removes and returns the least item; the heap must not be empty.
func (h *Heap[T]) Pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	var zero T
	h.items[last] = zero // nothing kept alive by the spare capacity
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

// Reset empties the heap, keeping its storage.
func (h *Heap[T]) Reset() {
	clear(h.items)
	h.items = h.items[:0]
}

// Items are the items in heap order (the least first, the rest in no
// particular order); the slice is the heap's own, to read, not to change.
func (h *Heap[T]) Items() []T { return h.items }

func (h *Heap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *Heap[T]) down(i int) {
	n := len(h.items)
	for {
		small := i
		if l := 2*i + 1; l < n && h.less(h.items[l], h.items[small]) {
			small = l
		}
		if r := 2*i + 2; r < n && h.less(h.items[r], h.items[small]) {
			small = r
		}
		if small == i {
			return
		}
		h.items[i], h.items[small] = h.items[small], h.items[i]
		i = small
	}
}
