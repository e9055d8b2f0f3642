package heapq

// The heap operations on a plain slice, for callers that keep the slice
// themselves: to reuse its storage across rounds, to fill it and then
// heapify it at once, or to change the top in place and restore the order
// (Fix). The slice is a heap under less when Init made it one or every
// change went through Push, Pop and Fix.

// Init makes s a heap under less.
func Init[T any](s []T, less func(a, b T) bool) {
	for i := len(s)/2 - 1; i >= 0; i-- {
		down(s, i, less)
	}
}

// Push adds x to the heap s and returns the grown slice.
func Push[T any](s []T, x T, less func(a, b T) bool) []T {
	s = append(s, x)
	up(s, len(s)-1, less)
	return s
}

// Pop removes the least item of the heap s, which must not be empty, and
// returns the shrunk slice; the item is s[0] before the call.
func Pop[T any](s []T, less func(a, b T) bool) []T {
	last := len(s) - 1
	s[0] = s[last]
	var zero T
	s[last] = zero
	s = s[:last]
	if last > 0 {
		down(s, 0, less)
	}
	return s
}

// Fix restores the heap order after s[i] changed.
func Fix[T any](s []T, i int, less func(a, b T) bool) {
	if !up(s, i, less) {
		down(s, i, less)
	}
}

// up moves s[i] toward the root while it is less than its parent, and
// reports whether it moved.
func up[T any](s []T, i int, less func(a, b T) bool) bool {
	moved := false
	for i > 0 {
		parent := (i - 1) / 2
		if !less(s[i], s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i, moved = parent, true
	}
	return moved
}

// down moves s[i] toward the leaves while a child is less than it.
func down[T any](s []T, i int, less func(a, b T) bool) {
	n := len(s)
	for {
		small := i
		if l := 2*i + 1; l < n && less(s[l], s[small]) {
			small = l
		}
		if r := 2*i + 2; r < n && less(s[r], s[small]) {
			small = r
		}
		if small == i {
			return
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
}
