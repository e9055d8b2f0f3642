package heapq

// Timeline is a min-heap of values by (At, Seq): a discrete-event
// simulation's queue. Its order is two fields compared in place, so a
// simulation whose hottest path is this queue pays no call and no copy
// of the values per comparison, as a less function would cost it. The
// zero Timeline is empty and ready.
type Timeline[T any] struct {
	items []Timed[T]
}

// Timed is a value with its time and a sequence number that orders the
// values of one time (the order they were scheduled in, say).
type Timed[T any] struct {
	At    float64
	Seq   uint64
	Value T
}

// Len is the number of values queued.
func (h *Timeline[T]) Len() int { return len(h.items) }

// Reset empties the timeline, keeping its storage.
func (h *Timeline[T]) Reset() {
	clear(h.items)
	h.items = h.items[:0]
}

// Push queues v at (at, seq).
func (h *Timeline[T]) Push(at float64, seq uint64, v T) {
	h.items = append(h.items, Timed[T]{At: at, Seq: seq, Value: v})
	a := h.items
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !earlier(&a[i], &a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

// Pop removes and returns the earliest value; the timeline must not be
// empty.
func (h *Timeline[T]) Pop() Timed[T] {
	a := h.items
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a[n] = Timed[T]{}
	a = a[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && earlier(&a[l], &a[m]) {
			m = l
		}
		if r < n && earlier(&a[r], &a[m]) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	h.items = a
	return top
}

func earlier[T any](x, y *Timed[T]) bool {
	if x.At != y.At {
		return x.At < y.At
	}
	return x.Seq < y.Seq
}
