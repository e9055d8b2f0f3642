package raftstore

import (
	"testing"
)

func TestNode_RestartFromDisk(t *testing.T) {
	dirs, addrs := tempDirs(t, 3), freeAddrs(t, 3)
	c := newTCPCluster(t, dirs, addrs, nil)
	for id, n := range c.nodes {
		if !n.bootstrapped {
			t.Errorf("%s: first start did not bootstrap", id)
		}
	}
	leader := c.waitLeader()
	first := seq("a", 20)
	applyAll(t, leader, first...)
	if err := leader.TakeSnapshot(); err != nil {
		t.Fatalf("TakeSnapshot: %v", err)
	}
	second := seq("b", 10)
	applyAll(t, leader, second...)
	want := append(first, second...)
	c.waitSame(want, c.ids...)
	for _, id := range c.ids {
		c.stop(id)
	}

	// Same directories, addresses and Bootstrap flag, fresh FSMs.
	c = newTCPCluster(t, dirs, addrs, nil)
	for id, n := range c.nodes {
		if n.bootstrapped {
			t.Errorf("%s: restart bootstrapped again, want a no-op", id)
		}
	}
	leader = c.waitLeader()
	c.waitSame(want, c.ids...)
	applyAll(t, leader, "c")
	c.waitSame(append(want, "c"), c.ids...)
}
