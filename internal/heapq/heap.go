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
func (h *Heap[T]) Push(x T) { h.items = Push(h.items, x, h.less) }

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
	h.items = Pop(h.items, h.less)
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
