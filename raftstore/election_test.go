package raftstore

import (
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
