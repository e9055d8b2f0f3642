package raftstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestNode_PartitionedLeaderCatchesUp(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) { cfg.ApplyTimeout = 2 * time.Second })
	old := c.waitLeader()
	waitLeaderChange(t, old, true)
	before := seq("a", 5)
	applyAll(t, old, before...)
	c.waitSame(before, c.ids...)

	// Cut the leader off: it is a minority of one.
	c.net.Disconnect(old.ID())
	_, err := old.Apply(context.Background(), []byte("lost"))
	switch {
	case errors.Is(err, ErrLeadershipLost), errors.Is(err, ErrNotLeader), errors.Is(err, ErrTimeout):
		t.Logf("apply on the isolated leader: %v", err)
	default:
		t.Fatalf("Apply on the isolated leader: error = %v, want leadership lost, not leader or timeout", err)
	}
	waitLeaderChange(t, old, false)

	var majority []string
	for _, id := range c.ids {
		if id != old.ID() {
			majority = append(majority, id)
		}
	}
	leader := c.waitLeader(majority...)
	during := seq("b", 5)
	applyAll(t, leader, during...)
	want := append(slices.Clone(before), during...)
	c.waitSame(want, majority...)
	if got := c.fsms[old.ID()].commands(); !slices.Equal(got, before) {
		t.Fatalf("isolated node applied %v, want only %v", got, before)
	}

	c.net.Reconnect(old.ID())
	c.waitSame(want, c.ids...)
	after := seq("c", 3)
	applyAll(t, c.waitLeader(), after...)
	c.waitSame(append(want, after...), c.ids...)
}

// waitLeaderChange fails the test unless n's LeaderChanges delivers want within 2s.
func waitLeaderChange(t *testing.T, n *Node, want bool) {
	t.Helper()
	select {
	case got := <-n.LeaderChanges():
		if got != want {
			t.Fatalf("%s: LeaderChanges delivered %v, want %v", n.ID(), got, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("%s: LeaderChanges delivered nothing, want %v", n.ID(), want)
	}
}

func TestInmemNetwork_PartitionAndHeal(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	leader := c.waitLeader()
	applyAll(t, leader, "a")
	c.waitSame([]string{"a"}, c.ids...)

	// Split the leader and one follower from the third node: the pair keeps working.
	var followers []string
	for _, id := range c.ids {
		if id != leader.ID() {
			followers = append(followers, id)
		}
	}
	pair, lone := []string{leader.ID(), followers[0]}, followers[1]
	c.net.Partition(pair...)
	applyAll(t, c.waitLeader(pair...), "b")
	c.waitSame([]string{"a", "b"}, pair...)
	if got := c.fsms[lone].commands(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("%s behind the partition applied %v, want [a]", lone, got)
	}
	c.net.Heal()
	c.waitSame([]string{"a", "b"}, c.ids...)
	waitFor(t, 5*time.Second, func() error {
		id, _ := c.nodes[lone].Leader()
		if id == "" || id == lone {
			return fmt.Errorf("%s sees leader %q", lone, id)
		}
		return nil
	})
}
