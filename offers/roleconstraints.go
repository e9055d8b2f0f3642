package offers

import (
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// Offer constraints on roles, as the operator sets them (Mesos 1.11's
// offer constraints, on nested roles too): the frameworks of a role, and
// of every role below it, are offered only agents whose attributes satisfy
// all of the role's constraints. A shape's constraints are the framework's
// to declare; these are the operator's, so a tenant can be kept to a pool
// of machines whatever its frameworks ask.

// SetRoleOfferConstraints sets the offer constraints of the role at path
// (created if missing); none removes them. They must be hard, per-agent
// constraints (no group operators).
func (a *Allocator) SetRoleOfferConstraints(path string, cs []protocol.Constraint) error {
	if path == "" {
		return fmt.Errorf("%w: the root takes no offer constraints", ErrInvalid)
	}
	for _, c := range cs {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%w: role %q: %v", ErrInvalid, path, err)
		}
		if c.IsGroup() || c.Soft {
			return fmt.Errorf("%w: role %q: offer constraint %s: want a hard per-agent constraint", ErrInvalid, path, c)
		}
	}
	n, err := a.tree.role(path, true)
	if err != nil {
		return err
	}
	switch had := len(n.offerCons) > 0; {
	case len(cs) > 0 && !had:
		a.constrainedRoles++
	case len(cs) == 0 && had:
		a.constrainedRoles--
	}
	n.offerCons = slices.Clone(cs)
	a.changed()
	return nil
}

// refused reports whether t.ag is closed to f: f declined it with a filter
// in force, or a role above f has offer constraints the agent fails.
func (a *Allocator) refused(t *turn, f *framework) bool {
	return t.ag.isFiltered(f.idx) || !a.rolesAdmit(f, t.ag)
}

// rolesAdmit reports whether ag satisfies the offer constraints of every
// role above f.
func (a *Allocator) rolesAdmit(f *framework, ag *agent) bool {
	if a.constrainedRoles == 0 {
		return true
	}
	for n := f.leaf.parent; n != nil; n = n.parent {
		if len(n.offerCons) == 0 {
			continue
		}
		if !protocol.HoldHard(n.offerCons, ag.info.Attributes) {
			return false
		}
	}
	return true
}
