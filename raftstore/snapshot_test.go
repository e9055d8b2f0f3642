package raftstore

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestNode_SnapshotThenJoin(t *testing.T) {
	small := func(cfg *Config) {
		cfg.TrailingLogs = 2 // compact nearly everything, so a joiner needs the snapshot
		cfg.SnapshotThreshold = 1 << 20
		cfg.SnapshotInterval = time.Hour
	}
	c := newInmemCluster(t, 3, small)
	leader := c.waitLeader()
	want := seq("s", 30)
	applyAll(t, leader, want...)
	if err := leader.TakeSnapshot(); err != nil {
		t.Fatalf("TakeSnapshot: %v", err)
	}
	if err := leader.TakeSnapshot(); err != nil {
		t.Fatalf("TakeSnapshot with nothing new: %v", err)
	}

	cfg := fastConfig(t, "n4")
	cfg.InMemory, cfg.Network = true, c.net
	small(&cfg)
	joiner := c.start(cfg, &testFSM{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := leader.Join(ctx, joiner.ID(), joiner.Addr()); err != nil {
		t.Fatalf("Join: %v", err)
	}
	if err := leader.Join(ctx, joiner.ID(), joiner.Addr()); err != nil {
		t.Fatalf("second Join: %v", err)
	}
	c.waitSame(want, "n4")
	if got := c.fsms["n4"].restoreCount(); got != 1 {
		t.Errorf("joiner restored %d snapshots, want 1", got)
	}
	more := seq("t", 5)
	applyAll(t, leader, more...)
	want = append(want, more...)
	c.waitSame(want, c.ids...)

	members, err := leader.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(members, Peer{ID: "n4", Address: "n4"}) || len(members) != 4 {
		t.Fatalf("members = %v, want n1..n4", members)
	}
	if err := leader.Remove(ctx, "n4"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if members, err = leader.Members(ctx); err != nil || len(members) != 3 {
		t.Fatalf("members after Remove = %v, %v; want 3", members, err)
	}
}
