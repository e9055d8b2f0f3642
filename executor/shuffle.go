package executor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
)

// This file holds the shuffle gate: the agent serves a bounded number of
// shuffle transfers (file server downloads naming a coflow) at once, and
// grants the waiting ones in the order of the leader's latest coflow
// priorities (Philae). Bounding the transfers is what makes the order
// matter: with every transfer running at once, the network, not the
// agent, would share the link among the coflows. With an egress rate
// (Config.ShuffleEgress) the pacer (shuffle_pacer.go) also shares the
// port's bytes among the transfers being served, by the same order.
// shuffle_report.go reports what the transfers sent, as they send it.

// shuffleGate grants slots to transfers in rank order. It knows nothing
// of NATS or HTTP, so it can be tested alone.
type shuffleGate struct {
	mu   sync.Mutex
	free int
	// waiting holds the transfers waiting for a slot, in arrival order;
	// grants scan it for the best rank, which is cheap for the hundreds
	// of transfers an agent may hold waiting.
	waiting []*gateWaiter
	arrived uint64
	ranks   rankTable
	// epoch is the highest non-zero epoch applied.
	epoch   uint64
	stopped bool
}

// gateWaiter is one transfer waiting for a slot. ready is closed once it
// is granted one (granted set) or the gate stopped (granted unset).
type gateWaiter struct {
	t       files.Transfer
	seq     uint64
	ready   chan struct{}
	granted bool
}

func newShuffleGate(slots int) *shuffleGate {
	return &shuffleGate{free: slots, ranks: newRankTable(nil, egressEnd)}
}

// acquire waits for a slot for t and returns the function that gives it
// back (once; later calls do nothing). It fails when ctx ends first, the
// transfer then leaving the line, or when the gate stops
// (files.ErrShuffleStopped).
func (g *shuffleGate) acquire(ctx context.Context, t files.Transfer) (release func(), err error) {
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return nil, files.ErrShuffleStopped
	}
	g.arrived++
	w := &gateWaiter{t: t, seq: g.arrived, ready: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.grantLocked()
	g.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.granted {
			// Granted as ctx ended: the slot goes to the next in line.
			g.free++
			g.grantLocked()
		} else if i := slices.Index(g.waiting, w); i >= 0 {
			g.waiting = slices.Delete(g.waiting, i, i+1)
		}
		return nil, ctx.Err()
	}
	if !w.granted {
		return nil, files.ErrShuffleStopped
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.free++
			g.grantLocked()
		})
	}, nil
}

// setPriorities replaces the ranks with those of a command (its entries
// already validated) and grants free slots in the new order. A command
// older than the last one applied, by its non-zero epoch, is refused.
func (g *shuffleGate) setPriorities(epoch uint64, prios []protocol.CoflowPriority) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if epoch != 0 && epoch < g.epoch {
		return fmt.Errorf("epoch %d is older than the applied %d", epoch, g.epoch)
	}
	if epoch != 0 {
		g.epoch = epoch
	}
	g.ranks = newRankTable(prios, egressEnd)
	g.grantLocked()
	return nil
}

// stop fails every waiting transfer and every later one; the transfers
// being served run on.
func (g *shuffleGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	for _, w := range g.waiting {
		close(w.ready)
	}
	g.waiting = nil
}

// rank returns t's rank, and false for an unranked transfer.
func (g *shuffleGate) rank(t files.Transfer) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.rankLocked(t)
}

// rankLocked returns t's rank, and false for an unranked transfer.
func (g *shuffleGate) rankLocked(t files.Transfer) (int, bool) {
	return g.ranks.rank(t)
}

// beforeLocked orders waiters: ranked before unranked, then by rank, then
// by arrival.
func (g *shuffleGate) beforeLocked(a, b *gateWaiter) bool {
	ra, oka := g.rankLocked(a.t)
	rb, okb := g.rankLocked(b.t)
	return rankedBefore(ra, oka, a.seq, rb, okb, b.seq)
}

// rankedBefore orders two transfers by their ranks (ok set for a ranked
// one) and arrivals: ranked before unranked, then by rank, then by arrival.
func rankedBefore(ra int, oka bool, seqA uint64, rb int, okb bool, seqB uint64) bool {
	switch {
	case oka != okb:
		return oka
	case oka && ra != rb:
		return ra < rb
	}
	return seqA < seqB
}

// grantLocked gives the free slots to the best waiters.
func (g *shuffleGate) grantLocked() {
	for g.free > 0 && len(g.waiting) > 0 {
		best := 0
		for i := 1; i < len(g.waiting); i++ {
			if g.beforeLocked(g.waiting[i], g.waiting[best]) {
				best = i
			}
		}
		w := g.waiting[best]
		g.waiting = slices.Delete(g.waiting, best, best+1)
		g.free--
		w.granted = true
		close(w.ready)
	}
}

// queue returns the waiting transfers in the order they would be granted.
func (g *shuffleGate) queue() []files.Transfer {
	g.mu.Lock()
	defer g.mu.Unlock()
	ws := slices.Clone(g.waiting)
	slices.SortFunc(ws, func(a, b *gateWaiter) int {
		if g.beforeLocked(a, b) {
			return -1
		}
		if g.beforeLocked(b, a) {
			return 1
		}
		return 0
	})
	out := make([]files.Transfer, len(ws))
	for i, w := range ws {
		out[i] = w.t
	}
	return out
}

// shuffleServer is the agent's files.Shuffle: the gate orders the
// transfers, the receivers' ingress (asker) and the pacer (nil when the
// egress is unlimited) share the ports among them, and the reporter tells
// the leader what they sent. ingress is this agent's own receiving port
// (nil when unlimited).
type shuffleServer struct {
	gate     *shuffleGate
	pacer    *portPacer
	ingress  *ingressServer
	asker    *ingressAsker
	report   *shuffleReporter
	arrived  atomic.Uint64
	counters shuffleCounters
}

var _ files.Shuffle = (*shuffleServer)(nil)

// newShuffleServer returns an agent's shuffle server. Its asker asks no
// receiver until the agent gives it its ID and the means (self, ask, tell).
func newShuffleServer(cfg Config, log hclog.Logger) *shuffleServer {
	s := &shuffleServer{gate: newShuffleGate(cfg.ShuffleSlots), report: newShuffleReporter()}
	if cfg.ShuffleEgress > 0 {
		s.pacer = newPortPacer(float64(cfg.ShuffleEgress), s.gate.rank)
	}
	if cfg.ShuffleIngress > 0 {
		s.ingress = newIngressServer(cfg.ShuffleIngress)
	}
	s.asker = newIngressAsker(s.ingress, log)
	return s
}

func (s *shuffleServer) Acquire(ctx context.Context, t files.Transfer) (files.Flow, error) {
	seq := s.arrived.Add(1)
	release := func() {}
	if t.Coflow != "" { // a download naming no coflow takes no slot
		var err error
		if release, err = s.gate.acquire(ctx, t); err != nil {
			return nil, err
		}
	}
	if s.pacer != nil {
		s.pacer.open(t, seq)
	}
	return &shuffleFlow{s: s, t: t, seq: seq, release: release}, nil
}

// applyCoflowPriorities applies a CoflowPrioritiesCommand to the gate and
// the ingress, without the entries that name invalid IDs.
func (a *Agent) applyCoflowPriorities(cmd *protocol.CoflowPrioritiesCommand) {
	prios := a.validPriorities(cmd.Epoch, "egress", cmd.Priorities, egressEnd)
	if in := a.shuffle.ingress; in != nil {
		in.setPriorities(cmd.Epoch, a.validPriorities(cmd.Epoch, "ingress", cmd.Ingress, ingressEnd))
	}
	if err := a.shuffle.gate.setPriorities(cmd.Epoch, prios); err != nil {
		a.log.Debug("stale coflow priorities dropped", "epoch", cmd.Epoch, "error", err)
		return
	}
	a.log.Trace("coflow priorities applied", "epoch", cmd.Epoch, "priorities", len(prios), "ingress", len(cmd.Ingress))
}

// validPriorities returns the entries of a list whose IDs are valid, and
// logs the others; other picks an entry's other end (empty for a whole
// coflow's entry).
func (a *Agent) validPriorities(epoch uint64, list string, in []protocol.CoflowPriority,
	other func(protocol.CoflowPriority) protocol.AgentID) []protocol.CoflowPriority {
	prios := make([]protocol.CoflowPriority, 0, len(in))
	var bad []protocol.CoflowPriority
	for _, p := range in {
		end := other(p)
		if !protocol.ValidID(string(p.FrameworkID)) || !protocol.ValidID(p.CoflowID) ||
			end != "" && !protocol.ValidID(string(end)) {
			bad = append(bad, p)
			continue
		}
		prios = append(prios, p)
	}
	if len(bad) > 0 {
		// One line for the lot: a broken leader may send thousands.
		a.log.Warn("coflow priorities with invalid ids dropped", "list", list, "epoch", epoch, "dropped", len(bad),
			"framework_id", truncateText(string(bad[0].FrameworkID), protocol.MaxIDLen),
			"coflow_id", truncateText(bad[0].CoflowID, protocol.MaxIDLen),
			"agent_id", truncateText(string(other(bad[0])), protocol.MaxIDLen))
	}
	return prios
}
