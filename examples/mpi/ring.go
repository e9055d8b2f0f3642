package main

import "fmt"

// ring is a rank's place in the ring: it sends to its right neighbour
// (rank+1) and receives from its left one (rank-1).
type ring struct {
	rank, size  int
	left, right *peer
}

// chunk returns the bounds of chunk c of a vector of n elements split
// into size chunks (some may be empty).
func (r *ring) chunk(c, n int) (lo, hi int) {
	return c * n / r.size, (c + 1) * n / r.size
}

func (r *ring) mod(i int) int { return ((i % r.size) + r.size) % r.size }

// allreduce sums v element by element over every rank of the ring, in
// place: a reduce-scatter, after which each rank holds one chunk summed
// over all ranks, then an allgather that passes the summed chunks round.
// Every rank sends and receives size-1 chunks in each phase, so the
// traffic per rank is about 2·len(v) whatever the number of ranks.
func (r *ring) allreduce(v []float64) error {
	if r.size == 1 {
		return nil
	}
	n := len(v)
	// Reduce-scatter: at step s, send chunk rank-s, receive chunk
	// rank-s-1 and add it in. After size-1 steps, chunk rank+1 is summed.
	for s := 0; s < r.size-1; s++ {
		send, recv := r.mod(r.rank-s), r.mod(r.rank-s-1)
		lo, hi := r.chunk(send, n)
		rlo, rhi := r.chunk(recv, n)
		in, err := r.exchange(send, v[lo:hi], recv, rhi-rlo)
		if err != nil {
			return fmt.Errorf("reduce-scatter step %d: %w", s, err)
		}
		for i, x := range in {
			v[rlo+i] += x
		}
	}
	// Allgather: at step s, send the summed chunk rank+1-s, receive the
	// summed chunk rank-s and keep it.
	for s := 0; s < r.size-1; s++ {
		send, recv := r.mod(r.rank+1-s), r.mod(r.rank-s)
		lo, hi := r.chunk(send, n)
		rlo, rhi := r.chunk(recv, n)
		in, err := r.exchange(send, v[lo:hi], recv, rhi-rlo)
		if err != nil {
			return fmt.Errorf("allgather step %d: %w", s, err)
		}
		copy(v[rlo:rhi], in)
	}
	return nil
}

// exchange sends chunk send to the right while it receives chunk recv
// of n values from the left: sending first everywhere could fill every
// socket buffer round the ring and stall.
func (r *ring) exchange(send int, vals []float64, recv, n int) ([]float64, error) {
	sent := make(chan error, 1)
	go func() { sent <- r.right.sendChunk(send, vals) }()
	in, err := r.left.recvChunk(recv, n)
	if serr := <-sent; err == nil {
		err = serr
	}
	return in, err
}
