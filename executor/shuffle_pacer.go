package executor

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/allot-project/allot/executor/files"
)

// portPacer shares one of the agent's shuffle ports among the transfers
// using it, a chunk at a time, by the leader's coflow priorities: the
// egress (Config.ShuffleEgress bytes a second) among the transfers being
// served, the ingress (Config.ShuffleIngress, shuffle_ingress.go) among
// those other agents send into this one. At the egress, the port sends one chunk at a time, at
// its whole rate, and each chunk goes to the best-ranked transfer asking
// for one (ranked before unranked, then by rank, then by the transfer's
// arrival: FIFO inside a rank). Transfers the leader did not rank share
// what is left round-robin, a chunk each, as the network would share it
// among them. A transfer that is not asking, because its
// client reads slowly, leaves the port to the next: it is work-conserving.
// This is the rate model of the leader's schedule (coflow.Rates) at one
// port: strict priority, whole port to the first flow.
type portPacer struct {
	rate float64 // bytes a second; > 0
	rank func(files.Transfer) (int, bool)
	wake chan struct{}
	// grantAtStart grants a chunk when the port starts carrying it rather
	// than when it has: the ingress's grant lets the sender go on to its
	// own egress, which takes the chunk's time again, so that a chunk
	// does not wait for both ports one after the other.
	grantAtStart bool

	mu      sync.Mutex
	waiting []*paceWaiter
	// active are the transfers being served, by arrival: the port waits
	// (up to paceHold) for the best of them between two of its chunks.
	active map[uint64]files.Transfer
	// lastGrant numbers each active transfer's latest chunk, for the
	// round-robin of the unranked ones.
	lastGrant map[uint64]uint64
	grants    uint64
	stopped   bool
}

// paceHold is the most the port, free, waits for the best-ranked transfer
// being served to ask for its next chunk (it is writing its last one out)
// before it gives the chunk to the best one waiting: without it, every
// other chunk would go to whichever transfer happened to be waiting. The
// wait is also at most an eighth of the last chunk's time on the port, so
// that a fast port loses little to a transfer whose client reads slowly.
const paceHold = 500 * time.Microsecond

// paceWaiter is one chunk waiting for the port. ready is closed once it
// is granted (granted set) or the pacer stopped (granted unset).
type paceWaiter struct {
	t       files.Transfer
	seq     uint64 // the transfer's arrival
	n       int
	ready   chan struct{}
	granted bool
}

func newPortPacer(rate float64, rank func(files.Transfer) (int, bool)) *portPacer {
	return &portPacer{rate: rate, rank: rank, wake: make(chan struct{}, 1),
		active: map[uint64]files.Transfer{}, lastGrant: map[uint64]uint64{}}
}

// open and close tell the pacer of a transfer (arrived seq) being served.
func (p *portPacer) open(t files.Transfer, seq uint64) {
	p.mu.Lock()
	p.active[seq] = t
	p.mu.Unlock()
}

// close also fails the transfer's chunks still waiting: at an ingress, a
// chunk its sender asked for ahead and no longer needs.
func (p *portPacer) close(seq uint64) {
	p.mu.Lock()
	delete(p.active, seq)
	delete(p.lastGrant, seq)
	p.waiting = slices.DeleteFunc(p.waiting, func(w *paceWaiter) bool {
		if w.seq == seq {
			close(w.ready) // not granted: the wait fails
			return true
		}
		return false
	})
	p.mu.Unlock()
	p.poke() // the port may be holding for it
}

func (p *portPacer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// errTransferClosed refuses a chunk of a transfer not open at the port.
var errTransferClosed = errors.New("transfer closed at the port")

// wait blocks until the port grants n bytes to transfer t (arrived seq),
// which must be open (open, not yet close).
func (p *portPacer) wait(ctx context.Context, t files.Transfer, seq uint64, n int) error {
	w := &paceWaiter{t: t, seq: seq, n: n, ready: make(chan struct{})}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return files.ErrShuffleStopped
	}
	if _, ok := p.active[seq]; !ok {
		// Closed already (at an ingress: its sender said it ended).
		p.mu.Unlock()
		return errTransferClosed
	}
	p.waiting = append(p.waiting, w)
	p.mu.Unlock()
	p.poke()
	select {
	case <-w.ready:
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		if i := slices.Index(p.waiting, w); i >= 0 {
			p.waiting = slices.Delete(p.waiting, i, i+1)
		}
		return ctx.Err()
	}
	if !w.granted {
		return files.ErrShuffleStopped
	}
	return nil
}

// run grants chunks until ctx ends, then fails the waiting ones and every
// later one. The port picks the best chunk waiting when it is free, sends
// it for n/rate, and grants it at the end of that time: a grant means the
// port has carried the chunk, so a transfer is done on paper when its last
// grant returns, the port never sends faster than its rate, and an idle
// port banks no credit.
func (p *portPacer) run(ctx context.Context) {
	defer p.stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	held := false
	hold := paceHold
	for {
		w, better := p.next(held)
		if w == nil {
			if better {
				// A wake may be stale (a chunk asked for during the last
				// one): only the hold's end lets a worse transfer have it.
				timer.Reset(hold)
				select {
				case <-p.wake:
				case <-timer.C:
					held = true
				case <-ctx.Done():
					return
				}
				continue
			}
			select {
			case <-p.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		held = false
		slot := time.Duration(float64(w.n) / p.rate * float64(time.Second))
		hold = min(paceHold, slot/8)
		if p.grantAtStart {
			close(w.ready)
		}
		timer.Reset(slot)
		select {
		case <-timer.C:
		case <-ctx.Done():
			if !p.grantAtStart {
				p.mu.Lock()
				w.granted = false // fails as the waiting ones do
				p.mu.Unlock()
				close(w.ready)
			}
			return
		}
		if !p.grantAtStart {
			close(w.ready)
		}
	}
}

// next takes the best waiting chunk off the line and marks it granted.
// It returns nil when none waits, and also, unless held (the port has
// waited for it already), when a transfer being served ranks before every
// one waiting: better is then set, and the port holds for it.
func (p *portPacer) next(held bool) (w *paceWaiter, better bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, c := range p.waiting {
		if best < 0 || p.beforeLocked(c.t, c.seq, p.waiting[best].t, p.waiting[best].seq) {
			best = i
		}
	}
	if !held {
		// A transfer that waits cannot come before the best waiting one,
		// so one that does is busy writing its last chunk out.
		for seq, t := range p.active {
			if best < 0 || p.beforeLocked(t, seq, p.waiting[best].t, p.waiting[best].seq) {
				return nil, true
			}
		}
	}
	if best < 0 {
		return nil, false
	}
	w = p.waiting[best]
	p.waiting = slices.Delete(p.waiting, best, best+1)
	w.granted = true
	p.grants++
	if _, ok := p.active[w.seq]; ok {
		p.lastGrant[w.seq] = p.grants
	}
	return w, false
}

// beforeLocked orders transfers as the gate does (rankedBefore), except
// that of two unranked ones the one served longer ago goes first.
func (p *portPacer) beforeLocked(a files.Transfer, aSeq uint64, b files.Transfer, bSeq uint64) bool {
	ra, oka := p.rank(a)
	rb, okb := p.rank(b)
	if !oka && !okb {
		if ga, gb := p.lastGrant[aSeq], p.lastGrant[bSeq]; ga != gb {
			return ga < gb
		}
	}
	return rankedBefore(ra, oka, aSeq, rb, okb, bSeq)
}

func (p *portPacer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for _, w := range p.waiting {
		close(w.ready)
	}
	p.waiting = nil
}
