package raftstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// fastConfig returns a Config with timeouts shrunk for tests.
func fastConfig(t testing.TB, id string) Config {
	cfg := DefaultConfig()
	cfg.NodeID = id
	cfg.Logger = testLogger(t, id)
	cfg.HeartbeatTimeout = 100 * time.Millisecond
	cfg.ElectionTimeout = 100 * time.Millisecond
	cfg.LeaderLeaseTimeout = 100 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.ApplyTimeout = 3 * time.Second
	return cfg
}

// cluster is a set of nodes built by the tests, with their FSMs and configs.
type cluster struct {
	t     testing.TB
	net   *InmemNetwork
	nodes map[string]*Node
	fsms  map[string]*testFSM
	cfgs  map[string]Config
	ids   []string
}

// newInmemCluster starts n in-memory nodes (n1..nN) that bootstrap together; modify, if
// not nil, adjusts each config.
func newInmemCluster(t testing.TB, n int, modify func(*Config)) *cluster {
	t.Helper()
	c := &cluster{t: t, net: NewInmemNetwork(), nodes: map[string]*Node{}, fsms: map[string]*testFSM{},
		cfgs: map[string]Config{}}
	var peers []Peer
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("n%d", i)
		c.ids = append(c.ids, id)
		peers = append(peers, Peer{ID: id, Address: id})
	}
	// The first peer stands for election as it bootstraps (StandForElection),
	// so it starts last, once the others it asks for votes are there.
	for _, id := range slices.Backward(c.ids) {
		cfg := fastConfig(t, id)
		cfg.InMemory, cfg.Network = true, c.net
		cfg.Peers, cfg.Bootstrap = peers, true
		if modify != nil {
			modify(&cfg)
		}
		c.start(cfg, &testFSM{})
	}
	return c
}

// newTCPCluster starts n durable nodes on loopback TCP with data under dirs; ports are
// picked once, so a restart with the same dirs and addresses finds the same cluster.
func newTCPCluster(t testing.TB, dirs []string, addrs []string, modify func(*Config)) *cluster {
	t.Helper()
	c := &cluster{t: t, nodes: map[string]*Node{}, fsms: map[string]*testFSM{}, cfgs: map[string]Config{}}
	var peers []Peer
	for i := range dirs {
		id := fmt.Sprintf("n%d", i+1)
		c.ids = append(c.ids, id)
		peers = append(peers, Peer{ID: id, Address: addrs[i]})
	}
	for i, id := range slices.Backward(c.ids) { // the first peer last, as above
		cfg := fastConfig(t, id)
		// Over TCP, with fsyncs, a loaded machine misses 100 ms heartbeats
		// and elections interrupt applies these tests expect to commit.
		cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 500*time.Millisecond, 500*time.Millisecond, 250*time.Millisecond
		cfg.DataDir, cfg.BindAddr = dirs[i], addrs[i]
		cfg.Peers, cfg.Bootstrap = peers, true
		if modify != nil {
			modify(&cfg)
		}
		c.start(cfg, &testFSM{})
	}
	return c
}

// start creates a node from cfg and registers its shutdown with the test.
func (c *cluster) start(cfg Config, fsm *testFSM) *Node {
	c.t.Helper()
	n, err := New(cfg, fsm)
	if err != nil {
		c.t.Fatalf("New(%s): %v", cfg.NodeID, err)
	}
	c.t.Cleanup(func() { _ = n.Shutdown() })
	c.nodes[cfg.NodeID], c.fsms[cfg.NodeID], c.cfgs[cfg.NodeID] = n, fsm, cfg
	if !slices.Contains(c.ids, cfg.NodeID) {
		c.ids = append(c.ids, cfg.NodeID)
	}
	return n
}

// stop shuts node id down and forgets it.
func (c *cluster) stop(id string) {
	c.t.Helper()
	if err := c.nodes[id].Shutdown(); err != nil {
		c.t.Fatalf("Shutdown(%s): %v", id, err)
	}
	delete(c.nodes, id)
}

// except returns the cluster's node IDs other than id.
func (c *cluster) except(id string) []string {
	return slices.DeleteFunc(slices.Clone(c.ids), func(other string) bool { return other == id })
}

// waitLeader waits until exactly one running node among ids (all running nodes if
// none given) is leader and all of them name it, and returns it.
func (c *cluster) waitLeader(ids ...string) *Node {
	c.t.Helper()
	if len(ids) == 0 {
		for id := range c.nodes {
			ids = append(ids, id)
		}
	}
	var leader *Node
	waitFor(c.t, 5*time.Second, func() error {
		leader = nil
		for _, id := range ids {
			if n := c.nodes[id]; n.IsLeader() {
				if leader != nil {
					return fmt.Errorf("two leaders: %s and %s", leader.ID(), id)
				}
				leader = n
			}
		}
		if leader == nil {
			return errors.New("no leader")
		}
		for _, id := range ids {
			if got, _ := c.nodes[id].Leader(); got != leader.ID() {
				return fmt.Errorf("%s sees leader %q, want %q", id, got, leader.ID())
			}
		}
		return nil
	})
	return leader
}

// waitSame waits until the FSMs of ids hold exactly want.
func (c *cluster) waitSame(want []string, ids ...string) {
	c.t.Helper()
	waitFor(c.t, 5*time.Second, func() error {
		for _, id := range ids {
			if got := c.fsms[id].commands(); !slices.Equal(got, want) {
				return fmt.Errorf("%s has %d commands, want %d (got tail %v)", id, len(got), len(want), tail(got))
			}
		}
		return nil
	})
}

func tail(s []string) []string {
	if len(s) > 3 {
		return s[len(s)-3:]
	}
	return s
}

// applyAll applies cmds one after another on n and checks each result.
func applyAll(t testing.TB, n *Node, cmds ...string) {
	t.Helper()
	for _, cmd := range cmds {
		v, err := n.Apply(context.Background(), []byte(cmd))
		if err != nil {
			t.Fatalf("Apply(%q): %v", cmd, err)
		}
		if v != "ok:"+cmd {
			t.Fatalf("Apply(%q) = %v, want %q", cmd, v, "ok:"+cmd)
		}
	}
}

func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}
