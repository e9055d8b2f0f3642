package dag

import (
	"context"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// driver is the part of *framework.Driver the scheduler calls. The
// scheduler's callbacks receive the real driver; tests drive the scheduler
// through this seam with a fake.
type driver interface {
	Launch(ctx context.Context, offerIDs []protocol.OfferID, tasks ...protocol.TaskInfo) error
	DeclineLeftover(ctx context.Context, offerIDs []protocol.OfferID) error
	DeclareDemand(ctx context.Context, r protocol.DemandRequest) error
	Suppress(ctx context.Context) error
	Revive(ctx context.Context) error
	Kill(ctx context.Context, taskID protocol.TaskID, agentID protocol.AgentID, grace time.Duration) error
}

var _ driver = (*framework.Driver)(nil)
