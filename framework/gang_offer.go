package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// Offer gives the gang offers the scheduler does not want. The gang keeps
// those it may use and returns the rest, which the scheduler should
// decline or use. When the offers it holds now allow a placement, it
// launches the gang before returning (one accept per agent, using ctx),
// and the returned offers also include those it held and did not use.
// err is the launch's failure (ErrGangLaunch); Done and Err report the
// outcome too. A gang that is not acquiring returns every offer.
func (g *Gang) Offer(ctx context.Context, offers []protocol.Offer) (rest []protocol.Offer, err error) {
	g.mu.Lock()
	if g.state != gangAcquiring {
		g.mu.Unlock()
		return offers, nil
	}
	for _, o := range offers {
		if g.useful(o) {
			g.held[o.ID] = o
		} else {
			rest = append(rest, o)
		}
	}
	p, ok := placement.Place(g.heldLocked(), placement.Spec{Tasks: g.spec.Tasks, Ports: g.spec.Ports, Constraints: g.spec.Constraints})
	if !ok {
		g.mu.Unlock()
		return rest, nil
	}
	g.state = gangLaunching
	used := map[protocol.OfferID]bool{}
	for _, ap := range p.Agents {
		for _, id := range ap.OfferIDs {
			used[id] = true
		}
	}
	var placed []protocol.Offer
	for _, o := range g.heldLocked() {
		if used[o.ID] {
			placed = append(placed, o)
		} else {
			rest = append(rest, o)
		}
	}
	clear(g.held)
	g.mu.Unlock()
	g.logger.Debug("gang placed", "agents", len(p.Agents))
	if err = g.prepare(&p); err != nil {
		err = fmt.Errorf("%w: %s: prepare: %w", ErrGangLaunch, g.spec.GroupID, err)
		g.finish(ctx, nil, err)
		return append(rest, placed...), err
	}
	if err = g.launch(ctx, p); errors.Is(err, errStaleOffers) {
		g.logger.Debug("gang placement on stale offers; acquiring again", "error", err)
		g.mu.Lock()
		if g.state == gangLaunching {
			g.state = gangAcquiring
		}
		g.mu.Unlock()
		select {
		case g.resumed <- struct{}{}:
		default:
		}
		return rest, nil
	} else if err != nil {
		g.finish(ctx, nil, err)
	} else {
		g.launched(ctx, p.Tasks)
	}
	return rest, err
}

// useful reports whether o's agent may host one of the gang's tasks,
// given what the gang already holds there; g.mu must be held.
func (g *Gang) useful(o protocol.Offer) bool {
	total := o.Resources.Clone()
	for _, h := range g.held {
		if h.AgentID == o.AgentID {
			total.AddInPlace(h.Resources)
		}
	}
	if !placement.GroupAllows(g.spec.Constraints, nil, o.Attributes) {
		return false
	}
	if ok, _ := placement.MatchOffer(o, g.spec.Constraints); !ok {
		return false
	}
	for _, t := range g.spec.Tasks {
		if ok, _ := placement.MatchOffer(o, t.Constraints); !ok || !total.Contains(t.Resources) {
			continue
		}
		left := total.Ranges[protocol.ResPorts].Minus(t.Resources.Ranges[protocol.ResPorts])
		if left.Count() >= uint64(g.spec.Ports) {
			return true
		}
	}
	return false
}

// heldLocked returns the held offers ordered by ID; g.mu must be held.
func (g *Gang) heldLocked() []protocol.Offer {
	out := make([]protocol.Offer, 0, len(g.held))
	for _, o := range g.held {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b protocol.Offer) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}
