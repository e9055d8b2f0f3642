// Package heapq holds the binary heaps the rest of the tree orders work
// with: Heap, a min-heap of any type under a less function (and the same
// operations on a caller's own slice: Init, Push, Pop, Fix); IDHeap, a
// min-heap of dense integer IDs by a float key that can change or remove
// an ID in place; and Timeline, values by (time, sequence) for event
// queues. All keep their items in a slice of the item type (nothing is
// boxed into an interface, as container/heap does), and none is safe for
// concurrent use.
package heapq
