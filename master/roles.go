package master

import (
	"context"
	"fmt"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// setRole configures a role's weight, quota guarantee and quota limit
// (replicated, so a new leader keeps them) and applies them to the
// allocator. An empty guarantee or limit removes the role's.
func (l *leader) setRole(ctx context.Context, path string, weight float64, quota state.Quota) (*state.Role, error) {
	cmd := state.SetRole{Path: path, Weight: weight}
	if !quota.Limit.IsEmpty() || !quota.Guarantee.IsEmpty() {
		cmd.Quota = &quota
	}
	res, err := l.apply(ctx, state.CmdSetRole, cmd)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	err = l.alloc.SetRole(path, weight)
	if err == nil {
		err = l.alloc.SetRoleLimit(path, quota.Limit)
	}
	if err == nil {
		err = l.alloc.SetRoleGuarantee(path, quota.Guarantee)
	}
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: role %s committed but not applied: %v", protocol.ErrInternal, path, err)
	}
	l.kick()
	l.logger.Info("role set by the operator", "role", path, "weight", weight,
		"guarantee", quota.Guarantee.String(), "limit", quota.Limit.String())
	r, _ := res.(*state.Role)
	return r, nil
}
