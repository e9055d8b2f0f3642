// Package heapq holds the binary heaps the rest of the tree orders work
// with: Heap, a min-heap of any type under a less function, and IDHeap, a
// min-heap of dense integer IDs by a float key that can change or remove
// an ID in place. Both keep their items in a slice of the item type
// (nothing is boxed into an interface, as container/heap does), and
// neither is safe for concurrent use.
package heapq
