package framework

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// UnlimitedCount is a TaskShape count the allocator treats as having no
// bound: the framework is offered units of the shape on every agent they
// fit, and launches do not lower it.
const UnlimitedCount int64 = math.MaxInt64

// demandState is the framework's demand as the leader should hold it: the
// scheduler's latest declaration, lowered by the launches since (as the
// allocator lowers its copy), plus the shapes of gangs that are acquiring.
type demandState struct {
	declared bool // something was declared once: from then on it is always sent
	own      protocol.DemandRequest
	gangs    map[*Gang][]protocol.TaskShape
	order    []*Gang
}

// demandRequestLocked builds the request that declares the current demand,
// and whether one is due; d.mu must be held. Gangs' shapes follow the
// scheduler's own in the Demand list.
func (d *Driver) demandRequestLocked() (protocol.DemandRequest, bool) {
	s := &d.demand
	req := protocol.DemandRequest{
		FrameworkID:   d.id,
		Demand:        cloneShapes(s.own.Demand),
		MustStart:     cloneShapes(s.own.MustStart),
		Optional:      cloneShapes(s.own.Optional),
		RemainingWork: s.own.RemainingWork,
	}
	for _, g := range s.order {
		req.Demand = append(req.Demand, cloneShapes(s.gangs[g])...)
	}
	return req, s.declared
}

// Demand declares the framework's pending tasks, replacing the previous
// declaration: the master then offers resources in whole task units of
// these shapes. It is shorthand for DeclareDemand with only Demand set.
func (d *Driver) Demand(ctx context.Context, shapes ...protocol.TaskShape) error {
	return d.DeclareDemand(ctx, protocol.DemandRequest{Demand: shapes})
}

// DeclareDemand declares the framework's demand in full (demand,
// must-start set, optional work, remaining work), replacing the previous
// declaration; FrameworkID is filled in. The driver keeps it, lowers each
// shape's count as tasks of that shape launch (as the master does), and
// declares what remains again after every subscribe, since the leader
// keeps demand in memory only.
//
// Called before Run, it is declared right after the first subscribe,
// before offers open, so the framework never receives an offer that does
// not follow it. Once a framework has declared demand the master offers
// it only what it declares; an empty declaration withdraws it, and the
// framework is offered whole remainders again, as one that never
// declared; a shape with a count of zero keeps the declaration and wants
// nothing for now. Suppress to stop offers.
func (d *Driver) DeclareDemand(ctx context.Context, r protocol.DemandRequest) error {
	if err := validateDemand(r); err != nil {
		return err
	}
	d.mu.Lock()
	d.demand.own = protocol.DemandRequest{
		Demand:        cloneShapes(r.Demand),
		MustStart:     cloneShapes(r.MustStart),
		Optional:      cloneShapes(r.Optional),
		RemainingWork: r.RemainingWork,
	}
	d.demand.declared = true
	d.mu.Unlock()
	return d.sendDemand(ctx)
}

// sendDemand sends the current demand if the framework is subscribed; a
// later subscribe sends it otherwise.
func (d *Driver) sendDemand(ctx context.Context) error {
	if !d.isReady() {
		return d.notStopped()
	}
	if _, _, err := d.session(); err != nil {
		return err
	}
	return d.withState(ctx, func() error {
		d.mu.Lock()
		req, due := d.demandRequestLocked()
		r := d.req
		d.mu.Unlock()
		if !due {
			return nil
		}
		if err := r.retry(ctx, protocol.VerbDemand, req, nil, nil); err != nil {
			return d.checkFatal(fmt.Errorf("declare demand: %w", err))
		}
		return nil
	})
}

// setGangDemand adds, replaces or (with no shapes) removes a gang's shapes
// and declares the result.
func (d *Driver) setGangDemand(ctx context.Context, g *Gang, shapes []protocol.TaskShape) error {
	d.mu.Lock()
	if d.demand.gangs == nil {
		d.demand.gangs = map[*Gang][]protocol.TaskShape{}
	}
	_, had := d.demand.gangs[g]
	switch {
	case len(shapes) > 0:
		if !had {
			d.demand.order = append(d.demand.order, g)
		}
		d.demand.gangs[g] = cloneShapes(shapes)
		d.demand.declared = true
	case had:
		delete(d.demand.gangs, g)
		d.demand.order = slices.DeleteFunc(d.demand.order, func(x *Gang) bool { return x == g })
	default:
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	return d.sendDemand(ctx)
}

// launchedLocked lowers the counts of the shapes a launched task matches,
// as the leader lowers its copy, so that a declaration sent again after a
// subscribe asks for what is still pending. kind is the kind of offer the
// task counts against (launchKinds). The task leaves the first matching
// shape of Demand or of a gang's shapes, and the first matching shape of
// MustStart for a fair task or Optional for a leftover one (the other list
// when that one has none pending); unlimited counts stay. With Demand =
// MustStart + Optional, the leader's fair demand, max(Demand − Optional,
// MustStart), then drops by one for a fair task and its leftover demand by
// one for a leftover task. d.mu must be held.
func (d *Driver) launchedLocked(t protocol.TaskInfo, kind protocol.OfferKind) {
	s := &d.demand
	lists := [][]protocol.TaskShape{s.own.Demand}
	for _, g := range s.order {
		lists = append(lists, s.gangs[g])
	}
	lowerShape(t.Resources, lists...)
	own, other := s.own.MustStart, s.own.Optional
	if kind == protocol.OfferLeftover {
		own, other = other, own
	}
	if !lowerShape(t.Resources, own) {
		lowerShape(t.Resources, other)
	}
}

// lowerShape lowers the count of the first shape across lists with the
// task's scalar resources and tasks pending; it reports whether there was
// one.
func lowerShape(res protocol.Resources, lists ...[]protocol.TaskShape) bool {
	for _, l := range lists {
		for i := range l {
			if l[i].Count > 0 && sameScalars(l[i].Resources, res) {
				if l[i].Count != UnlimitedCount {
					l[i].Count--
				}
				return true
			}
		}
	}
	return false
}

// launchKinds says which kind of offer each task of an accept counts
// against, as the leader decides it: the fair offers first, in task
// order, while the task's scalars fit what is left of them, and the rest
// against the leftover offers. d.mu must be held.
func (d *Driver) launchKinds(offerIDs []protocol.OfferID, tasks []protocol.TaskInfo) []protocol.OfferKind {
	fair := map[string]int64{}
	haveFair, haveLeftover := false, false
	for _, id := range offerIDs {
		o := d.outstanding[id]
		if o.Kind == protocol.OfferLeftover {
			haveLeftover = true
			continue
		}
		haveFair = true
		for k, v := range o.Resources.Scalars {
			fair[k] += v
		}
	}
	kinds := make([]protocol.OfferKind, len(tasks))
	for i, t := range tasks {
		kinds[i] = protocol.OfferFair
		fits := haveFair
		for k, v := range t.Resources.Scalars {
			fits = fits && v <= fair[k]
		}
		if haveLeftover && !fits {
			kinds[i] = protocol.OfferLeftover
			continue
		}
		for k, v := range t.Resources.Scalars {
			fair[k] -= v
		}
	}
	return kinds
}

// sameScalars reports whether a and b hold the same scalar amounts (zero
// amounts count as absent).
func sameScalars(a, b protocol.Resources) bool {
	for k, v := range a.Scalars {
		if b.Scalars[k] != v {
			return false
		}
	}
	for k, v := range b.Scalars {
		if a.Scalars[k] != v {
			return false
		}
	}
	return true
}

// validateDemand checks a declaration as the leader will, except for the
// framework ID, which the driver fills in.
func validateDemand(r protocol.DemandRequest) error {
	if n := len(r.Demand) + len(r.MustStart) + len(r.Optional); n > protocol.MaxListLen {
		return fmt.Errorf("%w: %d task shapes, limit %d", protocol.ErrInvalidArgument, n, protocol.MaxListLen)
	}
	for _, l := range [][]protocol.TaskShape{r.Demand, r.MustStart, r.Optional} {
		for i, s := range l {
			if err := s.Validate(); err != nil {
				return fmt.Errorf("shape %d: %w", i, err)
			}
		}
	}
	if math.IsNaN(r.RemainingWork) || math.IsInf(r.RemainingWork, 0) || r.RemainingWork < 0 {
		return fmt.Errorf("%w: remaining work %v", protocol.ErrInvalidArgument, r.RemainingWork)
	}
	return nil
}

func cloneShapes(in []protocol.TaskShape) []protocol.TaskShape {
	if len(in) == 0 {
		return nil
	}
	out := make([]protocol.TaskShape, len(in))
	for i, s := range in {
		out[i] = s
		out[i].Resources = s.Resources.Clone()
		out[i].Constraints = slices.Clone(s.Constraints)
	}
	return out
}
