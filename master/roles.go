package master

import (
	"context"
	"fmt"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// setRole configures a role's weight and quota limit (replicated, so a new
// leader keeps them) and applies them to the allocator. An empty limit
// removes the role's limit.
func (l *leader) setRole(ctx context.Context, path string, weight float64, limit protocol.Resources) (*state.Role, error) {
	cmd := state.SetRole{Path: path, Weight: weight}
	if !limit.IsEmpty() {
		cmd.Quota = &state.Quota{Limit: limit}
	}
	res, err := l.apply(ctx, state.CmdSetRole, cmd)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	err = l.alloc.SetRole(path, weight)
	if err == nil {
		err = l.alloc.SetRoleLimit(path, limit)
	}
	l.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: role %s committed but not applied: %v", protocol.ErrInternal, path, err)
	}
	l.kick()
	l.logger.Info("role set by the operator", "role", path, "weight", weight, "limit", limit.String())
	r, _ := res.(*state.Role)
	return r, nil
}
