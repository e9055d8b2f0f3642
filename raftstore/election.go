package raftstore

import (
	"fmt"
	"time"
)

// StandForElection makes this node, if it is a follower that has not heard
// from a leader within its heartbeat timeout (a cluster just started, or
// its leader known to be gone), stand for election now rather than when
// its heartbeat timer next fires: up to twice the heartbeat timeout later.
// It changes no setting. A node that hears from a leader in time ignores
// it, as it would the timer. It needs a leader lease timeout below the
// heartbeat timeout.
//
// hashicorp/raft has no call for this; lowering the heartbeat timeout
// through ReloadConfig fires a follower's timer at once, and the timeout is
// put back straight after (the timer reads it again when it fires).
func (n *Node) StandForElection() error {
	rc := n.raft.ReloadableConfig()
	hb := rc.HeartbeatTimeout
	lower := rc
	lower.HeartbeatTimeout = hb - time.Nanosecond
	lower.ElectionTimeout = max(rc.ElectionTimeout, lower.HeartbeatTimeout)
	if err := n.raft.ReloadConfig(lower); err != nil {
		return fmt.Errorf("stand for election: %w", err)
	}
	if err := n.raft.ReloadConfig(rc); err != nil {
		return fmt.Errorf("stand for election: restore the heartbeat timeout: %w", err)
	}
	return nil
}
