package offers

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// Quota limits on roles, nested roles included (Mesos bounds only top-level
// roles): a role's limit bounds what its whole subtree holds, running plus
// offered, in each resource the limit names; resources it does not name are
// unbounded. No offer, fair, leftover or remainder, takes a role past any
// of its ancestors' limits. Allocation against a limit is tracked per role
// node (held), updated with every change of a framework's allocation.

// SetRoleLimit sets the limit of the role at path (created if missing); an
// empty limit removes it. What a subtree already holds is not taken back
// when a limit falls below it: the subtree only gets nothing more.
func (a *Allocator) SetRoleLimit(path string, limit protocol.Resources) error {
	if path == "" {
		return fmt.Errorf("%w: the root takes no limit", ErrInvalid)
	}
	if err := limit.Validate(); err != nil {
		return fmt.Errorf("%w: role %q limit: %v", ErrInvalid, path, err)
	}
	n, err := a.tree.role(path, true)
	if err != nil {
		return err
	}
	had := n.limited != nil
	n.limit, n.limited = nil, nil
	for name, x := range limit.Scalars {
		j := a.reg.id(name)
		n.limit = n.limit.grow(j + 1)
		n.limit[j] = x
		for len(n.limited) <= j {
			n.limited = append(n.limited, false)
		}
		n.limited[j] = true
	}
	switch {
	case n.limited != nil && !had:
		a.limits++
	case n.limited == nil && had:
		a.limits--
	}
	a.changed()
	return nil
}

// holdDelta adds sign*v to what every role above f holds.
func (a *Allocator) holdDelta(f *framework, v vec, sign int64) {
	for n := f.leaf.parent; n != nil; n = n.parent {
		n.held = n.held.grow(len(v))
		for j, x := range v {
			n.held[j] += sign * x
		}
	}
}

// addAlloc changes f's allocation (running plus offered) by sign*v.
func (a *Allocator) addAlloc(f *framework, v vec, sign int64) {
	if sign > 0 {
		f.alloc = f.alloc.add(v)
	} else {
		f.alloc = f.alloc.sub(v)
	}
	a.holdDelta(f, v, sign)
}

// withinLimits reports whether f may be allocated v more under every
// limit above it and the headroom of unmet guarantees (guarantee.go).
func (a *Allocator) withinLimits(f *framework, v vec) bool {
	if !a.headroomAllows(f, v) {
		return false
	}
	if a.limits == 0 {
		return true
	}
	for n := f.leaf.parent; n != nil; n = n.parent {
		for j, ok := range n.limited {
			if ok && n.held.at(j)+v.at(j) > n.limit[j] {
				return false
			}
		}
	}
	return true
}

// capToLimits trims v to what the limits above f and the headroom of
// unmet guarantees still allow.
func (a *Allocator) capToLimits(f *framework, v vec) vec {
	v = a.capToHeadroom(f, v)
	if a.limits == 0 {
		return v
	}
	for n := f.leaf.parent; n != nil; n = n.parent {
		for j, ok := range n.limited {
			if ok && j < len(v) {
				v[j] = min(v[j], max(0, n.limit[j]-n.held.at(j)))
			}
		}
	}
	return v
}
