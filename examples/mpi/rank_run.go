package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// rankRun is one rank's run: its listener, its connections and what it
// found.
type rankRun struct {
	cfg  rankConfig
	ln   *net.TCPListener
	stop time.Time // the rank's deadline

	mu    sync.Mutex
	conns []*peer

	members []*peer // rank 0: the joined ranks' connections, by rank
	root    *peer   // other ranks: the connection to rank 0
	res     result
}

func (k *rankRun) peer(c net.Conn) *peer {
	p := newPeer(c, k.cfg.Step, k.stop)
	k.mu.Lock()
	k.conns = append(k.conns, p)
	k.mu.Unlock()
	return p
}

// closeAll closes the listener and every connection.
func (k *rankRun) closeAll() {
	_ = k.ln.Close()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.conns {
		p.close()
	}
}

// stepDeadline is the deadline of one network step.
func (k *rankRun) stepDeadline() time.Time {
	d := time.Now().Add(k.cfg.Step)
	if !k.stop.IsZero() && k.stop.Before(d) {
		return k.stop
	}
	return d
}

// rootConnect is rank 0's rendezvous: every other rank joins it with the
// address it listens on; it sends everyone the ring's addresses, then
// connects to its right neighbour and waits for its left one.
func (k *rankRun) rootConnect(ctx context.Context) (*ring, error) {
	size := k.cfg.Size
	k.members = make([]*peer, size)
	addrs := make([]string, size)
	addrs[0] = k.cfg.Root
	for joined := 0; joined < size-1; joined++ {
		c, err := accept(k.ln, k.joinDeadline())
		if err != nil {
			return nil, fmt.Errorf("waiting for ranks to join (%d of %d joined): %w", joined, size-1, err)
		}
		p := k.peer(c)
		var h hello
		if err := p.recvJSON(kindHello, &h); err != nil {
			return nil, fmt.Errorf("join: %w", err)
		}
		switch {
		case !h.Join || h.Size != size || h.Rank < 1 || h.Rank >= size:
			return nil, fmt.Errorf("join from %s: rank %d of %d (join %t), want a rank from 1 to %d of %d",
				c.RemoteAddr(), h.Rank, h.Size, h.Join, size-1, size)
		case k.members[h.Rank] != nil:
			return nil, fmt.Errorf("join from %s: rank %d joined twice", c.RemoteAddr(), h.Rank)
		}
		if _, _, err := net.SplitHostPort(h.Addr); err != nil {
			return nil, fmt.Errorf("join of rank %d: address %q: %w", h.Rank, h.Addr, err)
		}
		k.members[h.Rank], addrs[h.Rank] = p, h.Addr
	}
	for r := 1; r < size; r++ {
		if err := k.members[r].sendJSON(kindRing, ringMsg{Addrs: addrs}); err != nil {
			return nil, fmt.Errorf("ring addresses to rank %d: %w", r, err)
		}
	}
	return k.connectRing(ctx, addrs)
}

// joinDeadline bounds the wait for every rank to join: the ranks start
// when their agents get to them, so this is longer than one step.
func (k *rankRun) joinDeadline() time.Time {
	d := time.Now().Add(3 * k.cfg.Step)
	if !k.stop.IsZero() && k.stop.Before(d) {
		return k.stop
	}
	return d
}

// memberConnect joins rank 0, learns the ring's addresses, and connects
// to its neighbours.
func (k *rankRun) memberConnect(ctx context.Context) (*ring, error) {
	dctx, cancel := context.WithDeadline(ctx, k.joinDeadline())
	defer cancel()
	c, err := dial(dctx, k.cfg.Root, k.cfg.Step)
	if err != nil {
		return nil, fmt.Errorf("join rank 0: %w", err)
	}
	k.root = k.peer(c)
	host := k.cfg.Host
	if host == "" {
		host, _, _ = net.SplitHostPort(c.LocalAddr().String())
	}
	me := net.JoinHostPort(host, strconv.Itoa(k.cfg.Port))
	if err := k.root.sendJSON(kindHello, hello{Join: true, Rank: k.cfg.Rank, Size: k.cfg.Size, Addr: me}); err != nil {
		return nil, fmt.Errorf("join rank 0: %w", err)
	}
	// Rank 0 answers once every rank joined.
	k.root.stop = k.joinDeadline()
	var rm ringMsg
	err = k.root.recvJSON(kindRing, &rm)
	k.root.stop = k.stop
	if err != nil {
		return nil, fmt.Errorf("waiting for the ring's addresses: %w", err)
	}
	if len(rm.Addrs) != k.cfg.Size {
		return nil, fmt.Errorf("rank 0 sent %d ring addresses, want %d", len(rm.Addrs), k.cfg.Size)
	}
	return k.connectRing(ctx, rm.Addrs)
}

// connectRing connects to the right neighbour and accepts the left one.
func (k *rankRun) connectRing(ctx context.Context, addrs []string) (*ring, error) {
	r := &ring{rank: k.cfg.Rank, size: k.cfg.Size}
	if r.size == 1 {
		return r, nil
	}
	next := (r.rank + 1) % r.size
	prev := (r.rank + r.size - 1) % r.size
	dctx, cancel := context.WithDeadline(ctx, k.stepDeadline())
	defer cancel()
	c, err := dial(dctx, addrs[next], k.cfg.Step)
	if err != nil {
		return nil, fmt.Errorf("connect to rank %d: %w", next, err)
	}
	r.right = k.peer(c)
	if err := r.right.sendJSON(kindHello, hello{Rank: r.rank, Size: r.size}); err != nil {
		return nil, fmt.Errorf("connect to rank %d: %w", next, err)
	}
	c, err = accept(k.ln, k.stepDeadline())
	if err != nil {
		return nil, fmt.Errorf("waiting for rank %d: %w", prev, err)
	}
	r.left = k.peer(c)
	var h hello
	if err := r.left.recvJSON(kindHello, &h); err != nil {
		return nil, fmt.Errorf("waiting for rank %d: %w", prev, err)
	}
	if h.Join || h.Rank != prev || h.Size != r.size {
		return nil, fmt.Errorf("ring connection from %s: rank %d of %d, want rank %d of %d",
			c.RemoteAddr(), h.Rank, h.Size, prev, r.size)
	}
	return r, nil
}

// compute runs the two allreduces: the vector, then the pi partial sums.
func (k *rankRun) compute(r *ring) error {
	v := localVector(k.cfg.Rank, k.cfg.VectorLen)
	if err := r.allreduce(v); err != nil {
		return fmt.Errorf("vector allreduce: %w", err)
	}
	pi := []float64{piPartial(k.cfg.Rank, k.cfg.Size, k.cfg.Intervals)}
	if err := r.allreduce(pi); err != nil {
		return fmt.Errorf("pi allreduce: %w", err)
	}
	k.res = result{Size: k.cfg.Size, VectorLen: k.cfg.VectorLen, Intervals: k.cfg.Intervals,
		Checksum: checksum(v), Pi: pi[0], Agreed: 1}
	for _, i := range sampleIndexes(len(v)) {
		k.res.Samples = append(k.res.Samples, sample{Index: i, Value: v[i]})
	}
	return nil
}

// gather has every rank report its results to rank 0, which checks that
// they all found the same.
func (k *rankRun) gather() error {
	if k.cfg.Rank != 0 {
		return k.root.sendJSON(kindDone, doneMsg{Rank: k.cfg.Rank, Checksum: k.res.Checksum, Pi: k.res.Pi})
	}
	for r := 1; r < k.cfg.Size; r++ {
		var d doneMsg
		if err := k.members[r].recvJSON(kindDone, &d); err != nil {
			return fmt.Errorf("result of rank %d: %w", r, err)
		}
		if d.Rank != r || d.Checksum != k.res.Checksum || d.Pi != k.res.Pi {
			return fmt.Errorf("rank %d found checksum %.17g and pi %.17g, rank 0 %.17g and %.17g",
				d.Rank, d.Checksum, d.Pi, k.res.Checksum, k.res.Pi)
		}
		k.res.Agreed++
	}
	return nil
}
