package offers

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// Quota guarantees on roles, nested roles included: a role's guarantee is
// what its subtree is entitled to, in each resource the guarantee names,
// whatever other roles want. Two rules make it so, as Mesos's quota did:
//
//   - Guarantee first. In every agent's turn, before the H-DRF fair phase,
//     frameworks under a role still short of its guarantee get task units,
//     in H-DRF order among themselves, until the role holds its guarantee
//     (the last task may cross it: whole tasks meet a guarantee from above).
//   - Headroom. No allocation, of any kind to any framework, leaves less
//     unallocated in the cluster than the guarantees still unmet: for each
//     named resource, the sum over the outermost guaranteed roles of
//     guarantee less holding. A unit for a role short of its guarantee,
//     within its shortfall, shrinks what is owed as much as what is free,
//     so it always passes, even when less is unallocated than is owed (a
//     guarantee set on a full cluster, while preemption makes room).
//
// Headroom is held whether or not the guaranteed role has demand, so that
// it can start work at once (preemption, preempt.go, only serves a role
// that asks when others already hold what it needs); guarantees therefore
// idle resources while unused, and guarantees larger than the cluster stop
// every other role. Beyond its guarantee a role competes by H-DRF like any
// other, its guaranteed part counting in its share.

// SetRoleGuarantee sets the guarantee of the role at path (created if
// missing); an empty guarantee removes it.
func (a *Allocator) SetRoleGuarantee(path string, guarantee protocol.Resources) error {
	if path == "" {
		return fmt.Errorf("%w: the root takes no guarantee", ErrInvalid)
	}
	if err := guarantee.Validate(); err != nil {
		return fmt.Errorf("%w: role %q guarantee: %v", ErrInvalid, path, err)
	}
	n, err := a.tree.role(path, true)
	if err != nil {
		return err
	}
	had := n.guaranteed != nil
	n.guar, n.guaranteed = nil, nil
	for name, x := range guarantee.Scalars {
		if x == 0 {
			continue
		}
		j := a.reg.id(name)
		n.guar = n.guar.grow(j + 1)
		n.guar[j] = x
		for len(n.guaranteed) <= j {
			n.guaranteed = append(n.guaranteed, false)
		}
		n.guaranteed[j] = true
	}
	switch {
	case n.guaranteed != nil && !had:
		a.guaranteedRoles = append(a.guaranteedRoles, n)
		for p := n; p != nil; p = p.parent {
			p.guarBelow++
		}
	case n.guaranteed == nil && had:
		for p := n; p != nil; p = p.parent {
			p.guarBelow--
		}
		for i, g := range a.guaranteedRoles {
			if g == n {
				a.guaranteedRoles = append(a.guaranteedRoles[:i], a.guaranteedRoles[i+1:]...)
				break
			}
		}
	}
	a.outerGuaranteed = a.outerGuaranteed[:0]
	for _, g := range a.guaranteedRoles {
		if outermost(g) {
			a.outerGuaranteed = append(a.outerGuaranteed, g)
		}
	}
	a.changed()
	return nil
}

// owed reports whether a role above f is short of its guarantee in every
// resource v uses that the guarantee names (at least one), so that the
// role reaches its guarantee whole, with the last task crossing it.
func (a *Allocator) owed(f *framework, v vec) bool {
	for n := f.leaf.parent; n != nil; n = n.parent {
		if n.guaranteed != nil && short(n, v) {
			return true
		}
	}
	return false
}

func short(n *node, v vec) bool {
	uses := false
	for j, ok := range n.guaranteed {
		if !ok || v.at(j) == 0 {
			continue
		}
		if n.held.at(j) >= n.guar[j] {
			return false
		}
		uses = true
	}
	return uses
}

// outermost reports whether no role above n has a guarantee.
func outermost(n *node) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p.guaranteed != nil {
			return false
		}
	}
	return true
}

// headroomAllows reports whether allocating v more to f leaves at least
// the unmet guarantees unallocated, in every resource a guarantee names.
func (a *Allocator) headroomAllows(f *framework, v vec) bool {
	if len(a.guaranteedRoles) == 0 {
		return true
	}
	held := a.outsider(f)
	for j := range a.capacity {
		if v.at(j) == 0 {
			continue
		}
		need, named := a.unmetHeld(f, v, j, held)
		free := a.unallocatedHeld(j, held)
		if !named || free-v.at(j) >= need {
			continue
		}
		// Already short of headroom (a guarantee set or raised on a full
		// cluster): a unit that closes a guarantee's gap by all it takes
		// leaves the deficit where it was, and passes.
		before, _ := a.unmetHeld(nil, nil, j, held)
		if v.at(j)-(before-need) > max(0, free-before) {
			return false
		}
	}
	return true
}

// unmetHeld is what the outermost guarantees naming resource j still lack
// once f holds v more, and whether any guarantee names j; when held is
// set, the room a round holds for guarantees (preempt_hold.go) counts as
// their roles'.
func (a *Allocator) unmetHeld(f *framework, v vec, j int, held bool) (int64, bool) {
	var need int64
	named := false
	for _, n := range a.outerGuaranteed {
		if j >= len(n.guaranteed) || !n.guaranteed[j] {
			continue
		}
		named = true
		h := n.held.at(j)
		if held {
			h += a.preempt.view.under[n].at(j)
		}
		if f != nil && f.leaf.under(n) {
			h += v.at(j)
		}
		need += max(0, n.guar[j]-h)
	}
	return need, named
}

// unallocatedHeld is unallocated less, when held is set, the room a round
// holds for guarantees.
func (a *Allocator) unallocatedHeld(j int, held bool) int64 {
	if !held {
		return a.unallocated(j)
	}
	return a.unallocated(j) - a.preempt.view.room.at(j)
}

// unallocated is the cluster's capacity in resource j less what every
// framework holds.
func (a *Allocator) unallocated(j int) int64 {
	return a.capacity.at(j) - a.tree.root.held.at(j)
}

// capToHeadroom trims v, a whole remainder for f, to what the unmet
// guarantees leave: the unallocated less what they lack, plus what f's own
// outermost guaranteed role lacks (which f may take).
func (a *Allocator) capToHeadroom(f *framework, v vec) vec {
	if len(a.guaranteedRoles) == 0 {
		return v
	}
	held := a.outsider(f)
	for j := range v {
		need, named := a.unmetHeld(nil, nil, j, held)
		if !named {
			continue
		}
		allowed := a.unallocatedHeld(j, held) - need + a.owedTo(f, j)
		v[j] = min(v[j], max(0, allowed))
	}
	return v
}

// owedTo is what the outermost guaranteed role above f lacks of resource j.
func (a *Allocator) owedTo(f *framework, j int) int64 {
	var top *node
	for n := f.leaf.parent; n != nil; n = n.parent {
		if n.guaranteed != nil {
			top = n
		}
	}
	if top == nil || j >= len(top.guaranteed) || !top.guaranteed[j] {
		return 0
	}
	return max(0, top.guar[j]-top.held.at(j))
}

// guaranteedAbove reports whether a role above n has a guarantee.
func (n *node) guaranteedAbove() bool { return !outermost(n) }

// under reports whether n lies in the subtree of r.
func (n *node) under(r *node) bool {
	for p := n.parent; p != nil; p = p.parent {
		if p == r {
			return true
		}
	}
	return false
}

// turnGuarantee gives task units on t.ag to frameworks under roles short
// of their guarantee, in H-DRF order among them, before the fair phase.
func (a *Allocator) turnGuarantee(t *turn) {
	if len(a.guaranteedRoles) == 0 || a.tree.root.demanding == 0 {
		return
	}
	t.phase = phaseGuarantee
	t.targets = false
	a.fillTurn(t)
}
