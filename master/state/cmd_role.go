package state

import (
	"fmt"
	"maps"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// SetRole creates or replaces the configured role at Path.
// Apply result: the stored *Role.
type SetRole struct {
	Path string `msgpack:"path"`
	// Weight must be in (0, 1e6].
	Weight float64 `msgpack:"w"`
	// Quota is optional; where both name a scalar, the guarantee may not
	// exceed the limit.
	Quota *Quota `msgpack:"quota,omitempty"`
	// OfferConstraints are hard per-agent constraints (no group operators).
	OfferConstraints []protocol.Constraint `msgpack:"cons,omitempty"`
	// Preemption is "", "off", "guarantees" or "fair" (Role.Preemption).
	Preemption string `msgpack:"preempt,omitempty"`
}

// maxOfferConstraints bounds a role's offer constraints.
const maxOfferConstraints = 32

// RemoveRole removes the configured role at Path; frameworks in it stay
// and the role becomes implicit. Apply result: nil.
type RemoveRole struct {
	Path string `msgpack:"path"`
}

func (c *SetRole) validate() error {
	if !protocol.ValidRole(c.Path) {
		return errorf(protocol.ErrInvalidArgument, "role %q is not a role path", clip(c.Path))
	}
	if err := checkWeight("weight", c.Weight); err != nil {
		return err
	}
	switch c.Preemption {
	case "", "off", "guarantees", "fair":
	default:
		return errorf(protocol.ErrInvalidArgument, "preemption policy %q: want off, guarantees or fair", clip(c.Preemption))
	}
	if len(c.OfferConstraints) > maxOfferConstraints {
		return errorf(protocol.ErrInvalidArgument, "%d offer constraints: at most %d", len(c.OfferConstraints), maxOfferConstraints)
	}
	for _, oc := range c.OfferConstraints {
		if err := oc.Validate(); err != nil {
			return errorf(protocol.ErrInvalidArgument, "offer constraint: %v", err)
		}
		if oc.IsGroup() || oc.Soft {
			return errorf(protocol.ErrInvalidArgument, "offer constraint %s: want a hard per-agent constraint", oc)
		}
	}
	if q := c.Quota; q != nil {
		if err := checkResources("quota guarantee", q.Guarantee); err != nil {
			return err
		}
		if err := checkResources("quota limit", q.Limit); err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(q.Guarantee.Scalars)) {
			g := q.Guarantee.Scalars[name]
			if l, ok := q.Limit.Scalars[name]; ok && g > l {
				return errorf(protocol.ErrInvalidArgument, "quota guarantee %s %d exceeds limit %d", name, g, l)
			}
		}
	}
	return nil
}

func (s *State) applySetRole(_ uint64, body []byte) (any, error) {
	var c SetRole
	if err := decode(CmdSetRole, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("set role: %w", err)
	}
	r := &Role{Path: c.Path, Weight: c.Weight, Quota: c.Quota, OfferConstraints: c.OfferConstraints, Preemption: c.Preemption}
	s.cur.roles = s.cur.roles.set(c.Path, r)
	return r, nil
}

func (s *State) applyRemoveRole(_ uint64, body []byte) (any, error) {
	var c RemoveRole
	if err := decode(CmdRemoveRole, body, &c); err != nil {
		return nil, err
	}
	if _, ok := s.cur.roles.get(c.Path); !ok {
		return nil, errorf(protocol.ErrUnknownRole, "remove role %q", clip(c.Path))
	}
	s.cur.roles = s.cur.roles.delete(c.Path)
	return nil, nil
}
