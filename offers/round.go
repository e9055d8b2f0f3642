package offers

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// Decisions are what one call to Allocate decided: offers to send and
// offers to rescind.
type Decisions struct {
	Offers   []Offer
	Rescinds []Rescind
}

// Allocate runs one allocation round at now (docs/architecture.md, "One allocation round"):
// it first rescinds expired offers and drops expired filters, then gives
// every agent its turn, starting from a cursor that rotates each round so no
// agent is always served first.
//
// In an agent's turn, fair offers come first: the tree is walked from the
// root, at each level taking the child with the lowest weighted dominant
// share whose subtree has pending demand that fits the agent's free
// resources, passes the framework's filters and the shape's hard
// constraints, and that leaf tentatively receives one task's worth; this
// repeats until nothing fits. What is still free is the agent's leftover
// pool: frameworks' optional task shapes are fitted into it in the order
// Config.LeftoverOrder says (leftover.go). The remainder then goes whole to
// the framework without declared demand that the same walk picks, if it is
// at least Config.MinAllocatable. Each framework gets at most one offer of
// each kind per agent per round. With constraint classes in play, the CRV
// orders the agents' turns, plain agents first (crvround.go).
func (a *Allocator) Allocate(now time.Time) Decisions {
	var d Decisions
	d.Rescinds = a.Expire(now)
	a.expireFilters(now)
	if len(a.crv.soft) > 0 {
		a.crvSoftTick(now)
	}
	spare := a.leftoverCandidates()
	if a.tree.root.demanding == 0 && a.tree.root.open == 0 && len(spare) == 0 || len(a.agentList) == 0 {
		return d
	}
	a.viewHolds()
	defer func() { a.preempt.view.active = false }()
	if a.rules.refresh != nil {
		a.rules.refresh(a)
	}
	n := len(a.agentList)
	start := a.cursor % n
	a.cursor++
	a.crvPrepare(start)
	order := a.crv.turn.order
	t := &turn{hardOK: map[*shape]bool{}, shapeOf: map[*node]*shape{},
		built: map[*framework]*building{}, spare: map[*framework]*building{}}
	placed := a.turnOrder()
	agentAt := func(i int) *agent {
		switch {
		case placed != nil:
			return placed[i]
		case a.crv.turn.on:
			return order[i]
		}
		return a.agentList[(start+i)%n]
	}
	kept := a.reserveLarge(agentAt, n)
	for i, at := 0, start; i < n; i, at = i+1, at+1 {
		if at == n {
			at = 0 // rotating without a division per agent
		}
		ag := a.agentList[at]
		t.scarce = false
		switch {
		case placed != nil:
			// Placement's order replaces the constraint steering's.
			ag = placed[i]
		case a.crv.turn.on:
			ag, t.scarce = order[i], i >= a.crv.turn.plain
		}
		if ag.draining || ag.free.isZero() && len(ag.freePorts) == 0 {
			continue
		}
		if len(spare) == 0 && a.tree.root.open == 0 && len(a.preempt.holds) == 0 && !a.shapes.anyFits(ag) {
			// No pending task fits here, and nothing else is handed out
			// agent by agent: the turn would do nothing (a constrained
			// task passing the agents its constraints rule out, say).
			continue
		}
		t.ag = ag
		t.kept = kept != nil && kept[ag.idx]
		// Clearing even an empty map costs: most turns fill none.
		if len(t.built) > 0 {
			clear(t.built)
		}
		if len(t.spare) > 0 {
			clear(t.spare)
		}
		if len(t.hardOK) > 0 {
			clear(t.hardOK)
		}
		if len(t.shapeOf) > 0 {
			clear(t.shapeOf)
		}
		t.offers = t.offers[:0]
		held := a.turnHeld(t)
		a.turnGuarantee(t)
		a.turnFair(t)
		spare = a.turnLeftover(t, spare)
		a.turnRemainder(t)
		if held != nil {
			a.addFree(ag, held, 1)
		}
		if d.Offers == nil && len(t.offers) > 0 {
			d.Offers = make([]Offer, 0, max(a.lastOffers, len(t.offers)))
		}
		for _, b := range t.offers {
			d.Offers = append(d.Offers, a.makeOffer(ag, b, now))
		}
		if a.tree.root.demanding == 0 && a.tree.root.open == 0 && len(spare) == 0 {
			break
		}
	}
	a.lastOffers = len(d.Offers)
	return d
}

// turnFair hands out task units of declared demand on t.ag.
func (a *Allocator) turnFair(t *turn) {
	if a.tree.root.demanding == 0 {
		return
	}
	t.phase = phaseFair
	passes := []bool{false}
	if a.rules.targetsFirst {
		passes = []bool{true, false}
	}
	for _, targets := range passes {
		t.targets = targets
		a.fillTurn(t)
	}
}

// fillTurn gives task units on t.ag, one at a time, to the leaves the walk
// picks in the turn's phase, until nothing more fits.
func (a *Allocator) fillTurn(t *turn) {
	a.stamp++
	for a.shapes.anyFits(t.ag) {
		leaf := a.pickNext(t)
		if leaf == nil {
			return
		}
		a.giveUnit(t, leaf.fw, t.shapeOf[leaf])
	}
}

// turnRemainder offers what is left on t.ag to one framework without
// declared demand.
func (a *Allocator) turnRemainder(t *turn) {
	if a.tree.root.open == 0 || !a.allocatable(t.ag) || t.kept {
		return
	}
	t.phase = phaseRemainder
	t.targets = false
	a.stamp++
	leaf := a.pickNext(t)
	if leaf == nil {
		return
	}
	f := leaf.fw
	b := &building{fw: f, kind: KindFair, res: a.capToLimits(f, t.ag.free.clone()), ports: t.ag.freePorts, whole: true}
	if b.res.isZero() {
		return // its roles' limits leave it nothing
	}
	t.built[f] = b
	t.offers = append(t.offers, b)
	a.addFree(t.ag, b.res, -1)
	t.ag.freePorts = nil
	f.offered = f.offered.add(b.res)
	a.addAlloc(f, b.res, 1)
	a.tree.invalidate(leaf)
}

func (a *Allocator) pickNext(t *turn) *node {
	if a.rules.rescale != rescalePlain {
		a.syncAvail()
	}
	if a.rules.pick != nil {
		return a.rules.pick(a, t)
	}
	return a.pick(a.tree.root, t)
}

// giveUnit tentatively gives one task of shape s on t.ag to f.
func (a *Allocator) giveUnit(t *turn, f *framework, s *shape) {
	b := t.built[f]
	if b == nil {
		b = &building{fw: f, kind: KindFair, units: map[string]int64{}}
		t.built[f] = b
		t.offers = append(t.offers, b)
	}
	a.addUnit(t, b, s)
}

// addUnit moves one task of shape s from t.ag's free pool into the offer
// being built, and counts it as offered to the offer's framework.
func (a *Allocator) addUnit(t *turn, b *building, s *shape) {
	f := b.fw
	unit := s.res
	if dv := pickDevices(t.ag.free, t.ag.gpuDims, s.gpu); dv != nil {
		unit = s.res.clone().add(dv)
	}
	a.addFree(t.ag, unit, -1)
	if s.ports > 0 {
		p, _ := t.ag.freePorts.Take(s.ports)
		t.ag.freePorts = t.ag.freePorts.Minus(p)
		b.ports = b.ports.Union(p)
	}
	b.res = b.res.add(unit)
	b.units[s.key]++
	b.n++
	s.offered++
	f.offered = f.offered.add(unit)
	a.addAlloc(f, unit, 1)
	a.refresh(f)
}

// allocatable reports whether the agent's free resources reach one of the
// minimum allocatable amounts.
func (a *Allocator) allocatable(ag *agent) bool {
	if len(a.cfg.MinAllocatable) == 0 {
		return !ag.free.isZero()
	}
	for name, min := range a.cfg.MinAllocatable {
		if j, ok := a.reg.index[name]; ok && ag.free.at(j) >= max(min, 1) {
			return true
		}
	}
	return false
}

// protocolResources renders a vector plus ports as protocol resources.
func (a *Allocator) protocolResources(v vec, ports protocol.Ranges) protocol.Resources {
	r := a.reg.toResources(v)
	if len(ports) > 0 {
		r.Ranges = map[string]protocol.Ranges{protocol.ResPorts: ports}
	}
	return r
}
