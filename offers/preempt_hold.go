package offers

import "slices"

// Room held for a guarantee. A guarantee's task placed on warned tasks
// (or new victims) needs all their room on that agent at once, but their
// deadlines may differ: a victim chosen later, or one whose warning was
// renewed, dies later than the others. Until the last is gone, a round
// would hand the room the first ones freed to another framework (one of
// another role short of its guarantee, or any in the fair phase), whose
// new task the next plan must then take again, and the role short of its
// guarantee never gains. Room a plan counts as free for a guarantee's
// task is no safer: a round that reaches another agent first may give
// away the headroom the task needs beyond its role's shortfall. So each
// plan keeps, per agent, the room of the guarantees' tasks it placed
// there; until the next plan, and while the role is still short of its
// guarantee, a round offers that much of the agent's free room to those
// roles alone, and counts it as theirs when it weighs the headroom of
// unmet guarantees for anyone else.

// holdAt is the room held on one agent, by the guaranteed role it is held
// for.
type holdAt struct {
	roles []*node
	res   []vec
}

// holdView is a round's summary of the holds: the roles they are for, the
// room they hold in all, and by outermost guaranteed role the room held
// for roles at or below it.
type holdView struct {
	active bool
	roles  []*node
	room   vec
	under  map[*node]vec
}

// hold records that a task of res for the guarantee of role was placed on
// ag.
func (p *planner) hold(ag *agent, role *node, res vec) {
	if p.holds == nil {
		p.holds = map[*agent]*holdAt{}
	}
	h := p.holds[ag]
	if h == nil {
		h = &holdAt{}
		p.holds[ag] = h
	}
	i := slices.Index(h.roles, role)
	if i < 0 {
		h.roles, h.res = append(h.roles, role), append(h.res, nil)
		i = len(h.roles) - 1
	}
	h.res[i] = h.res[i].add(res)
}

// viewHolds sums up the last plan's holds for a round, over the agents'
// free room as the round starts.
func (a *Allocator) viewHolds() {
	v := &a.preempt.view
	v.active, v.roles, v.room = false, v.roles[:0], nil
	clear(v.under)
	for ag, h := range a.preempt.holds {
		if a.agents[ag.id] != ag {
			continue // gone since the plan
		}
		left := ag.free.clone()
		for i, role := range h.roles {
			if !short(role, h.res[i]) {
				continue // met since the plan: nothing to hold
			}
			var room vec
			for j, x := range h.res[i] {
				room = room.grow(j + 1)
				room[j] = max(min(x, left.at(j)), 0)
			}
			left = left.sub(room)
			v.room = v.room.add(room)
			if !slices.Contains(v.roles, role) {
				v.roles = append(v.roles, role)
			}
			if g := outerGuaranteeOf(role); g != nil {
				if v.under == nil {
					v.under = map[*node]vec{}
				}
				v.under[g] = v.under[g].add(room)
			}
			v.active = true
		}
	}
}

// outerGuaranteeOf is the outermost guaranteed role at or above n.
func outerGuaranteeOf(n *node) *node {
	var g *node
	for ; n != nil; n = n.parent {
		if n.guaranteed != nil {
			g = n
		}
	}
	return g
}

// outsider reports whether the round holds room f may not use: room held
// for roles none of which f lies under.
func (a *Allocator) outsider(f *framework) bool {
	v := &a.preempt.view
	if !v.active || f == nil {
		return false
	}
	for _, r := range v.roles {
		if f.leaf == r || f.leaf.under(r) {
			return false
		}
	}
	return true
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
	// A role that has met its guarantee since the plan (in an earlier
	// agent's turn, say) holds nothing: its frameworks compete as usual.
	var roles []*node
	var total vec
	for i, r := range h.roles {
		if short(r, h.res[i]) {
			roles = append(roles, r)
			total = total.add(h.res[i])
		}
	}
	if roles == nil {
		return nil
	}
	before := t.ag.free.clone()
	t.holders = roles
	a.turnGuarantee(t)
	t.holders = nil
	held := make(vec, len(total))
	for j, x := range total {
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
