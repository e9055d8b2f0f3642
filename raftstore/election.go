package raftstore

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"
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

// raftWatched is the leader watch's view of a Raft server.
type raftWatched struct{ r *raft.Raft }

func (w raftWatched) leader() (id, addr string) {
	a, i := w.r.LeaderWithID()
	return string(i), string(a)
}

func (w raftWatched) lastContact() time.Time { return w.r.LastContact() }

func (w raftWatched) follower() bool { return w.r.State() == raft.Follower }

func (w raftWatched) voters() ([]string, error) {
	f := w.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			ids = append(ids, string(s.ID))
		}
	}
	return ids, nil
}

// hurry lowers the heartbeat and election timeouts to d, which hashicorp/raft
// applies to a follower's timer at once, and returns what puts them back.
func (w raftWatched) hurry(d time.Duration) (func(), error) {
	rc := w.r.ReloadableConfig()
	fast := rc
	fast.HeartbeatTimeout, fast.ElectionTimeout = d, d
	if err := w.r.ReloadConfig(fast); err != nil {
		return nil, fmt.Errorf("shorten the election timeouts: %w", err)
	}
	return func() { _ = w.r.ReloadConfig(rc) }, nil
}
