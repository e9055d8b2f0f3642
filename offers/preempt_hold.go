package offers

import "slices"

// Room held for a guarantee. A guarantee's task placed on warned tasks
// (or new victims) needs all their room on that agent at once, but their
// deadlines may differ: a victim chosen later, or one whose warning was
// renewed, dies later than the others. Until the last is gone, a round
// would hand the room the first ones freed to another framework (one of
// another role short of its guarantee, or any in the fair phase), whose
// new task the next plan must then take again, and the role short of its
// guarantee never gains. So each plan keeps, per agent, the room of the
// guarantees' tasks it placed there on warned tasks; until the next plan,
// a round offers that much of the agent's free room to those roles alone.

// holdAt is the room held on one agent and the guaranteed roles it is
// held for.
type holdAt struct {
	res   vec
	roles []*node
}

// hold records that a task of res for the guarantee of role was placed on
// ag on warned tasks or victims.
func (p *planner) hold(ag *agent, role *node, res vec) {
	if p.holds == nil {
		p.holds = map[*agent]*holdAt{}
	}
	h := p.holds[ag]
	if h == nil {
		h = &holdAt{}
		p.holds[ag] = h
	}
	h.res = h.res.add(res)
	if !slices.Contains(h.roles, role) {
		h.roles = append(h.roles, role)
	}
}

// turnHeld runs t.ag's guarantee phase for the roles the agent's room is
// held for, then keeps what is still held out of the rest of the turn:
// it returns that room, which the caller gives back to the agent's free
// pool once the turn is over (nil when nothing is held).
func (a *Allocator) turnHeld(t *turn) vec {
	h := a.preempt.holds[t.ag]
	if h == nil {
		return nil
	}
	before := t.ag.free.clone()
	t.holders = h.roles
	a.turnGuarantee(t)
	t.holders = nil
	held := make(vec, len(h.res))
	for j, x := range h.res {
		taken := before.at(j) - t.ag.free.at(j)
		held[j] = max(min(x-taken, t.ag.free.at(j)), 0)
	}
	if held.isZero() {
		return nil
	}
	a.addFree(t.ag, held, -1)
	return held
}

// heldFor reports whether the turn serves leaf l: in the held room's
// phase, only leaves under a role it is held for.
func (t *turn) heldFor(l *node) bool {
	if t.holders == nil {
		return true
	}
	for _, r := range t.holders {
		if l.under(r) {
			return true
		}
	}
	return false
}
