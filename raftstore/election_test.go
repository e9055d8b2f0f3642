package raftstore

import (
	"fmt"
	"testing"
	"time"
)

// TestStandForElection_newCluster: a new cluster whose heartbeat timeout
// is far longer than the wait still elects a leader at once, the first
// peer listed, which stood for election when it bootstrapped; its
// timeouts are as configured afterwards.
func TestStandForElection_newCluster(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) {
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = time.Minute, time.Minute, 100*time.Millisecond
	})
	n := c.nodes["n1"]
	if got := c.waitLeader(); got != n {
		t.Fatalf("leader %s, want n1, the first peer", got.ID())
	}
	if rc := n.raft.ReloadableConfig(); rc.HeartbeatTimeout != time.Minute || rc.ElectionTimeout != time.Minute {
		t.Fatalf("timeouts after standing: heartbeat %s, election %s; want a minute each", rc.HeartbeatTimeout, rc.ElectionTimeout)
	}
}

// TestNode_standsWhenTheLeadersProcessEnds: over TCP, a follower learns
// that its leader's node ended (the connections it held closed, as at a
// process's exit) and stands once the leader has been silent for the
// lease. Raft alone would wait out the heartbeat timeout, longer than
// waitLeader's five seconds here.
func TestNode_standsWhenTheLeadersProcessEnds(t *testing.T) {
	const heartbeat, lease = 6 * time.Second, 2 * time.Second
	c := newTCPCluster(t, tempDirs(t, 3), freeAddrs(t, 3), func(cfg *Config) {
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = heartbeat, heartbeat, lease
	})
	old := c.waitLeader()
	applyAll(t, old, "a")
	c.stop(old.ID())
	rest := c.except(old.ID())
	next := c.waitLeader(rest...)
	applyAll(t, next, "b")
	c.waitSame([]string{"a", "b"}, rest...)
	for _, id := range rest {
		waitFor(t, 5*time.Second, func() error {
			if rc := c.nodes[id].raft.ReloadableConfig(); rc.HeartbeatTimeout != heartbeat || rc.ElectionTimeout != heartbeat {
				return fmt.Errorf("%s: timeouts %s and %s after the election, want %s", id, rc.HeartbeatTimeout, rc.ElectionTimeout, heartbeat)
			}
			return nil
		})
	}
}
