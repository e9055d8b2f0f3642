package master

import (
	"context"
	"fmt"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// setRole configures a role's weight, quota and offer constraints
// (replicated, so a new leader keeps them) and applies them to the
// allocator. An empty guarantee, limit or constraint list removes the
// role's.
func (l *leader) setRole(ctx context.Context, cmd state.SetRole) (*state.Role, error) {
	res, err := l.apply(ctx, state.CmdSetRole, cmd)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	err = l.configureRole(state.Role(cmd))
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: role %s committed but not applied: %v", protocol.ErrInternal, cmd.Path, err)
	}
	l.kick()
	var quota state.Quota
	if cmd.Quota != nil {
		quota = *cmd.Quota
	}
	l.logger.Info("role set by the operator", "role", cmd.Path, "weight", cmd.Weight,
		"guarantee", quota.Guarantee.String(), "limit", quota.Limit.String(), "offer_constraints", len(cmd.OfferConstraints),
		"preemption", cmd.Preemption)
	r, _ := res.(*state.Role)
	return r, nil
}

// configureRole applies a role's configuration to the allocator; l.mu is
// held.
func (l *leader) configureRole(r state.Role) error {
	path := r.Path
	var q state.Quota
	if r.Quota != nil {
		q = *r.Quota
	}
	if err := l.alloc.SetRole(path, r.Weight); err != nil {
		return err
	}
	if err := l.alloc.SetRoleLimit(path, q.Limit); err != nil {
		return err
	}
	if err := l.alloc.SetRoleGuarantee(path, q.Guarantee); err != nil {
		return err
	}
	if err := l.alloc.SetRolePreemption(path, offers.PreemptionPolicy(r.Preemption)); err != nil {
		return err
	}
	return l.alloc.SetRoleOfferConstraints(path, r.OfferConstraints)
}
