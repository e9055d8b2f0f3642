package raftstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestNode_ElectsLeader(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	leader := c.waitLeader()
	waitLeaderChange(t, leader, true)
	for id, n := range c.nodes {
		if n != leader && n.IsLeader() {
			t.Errorf("%s is leader too", id)
		}
	}
	members, err := leader.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 3 {
		t.Errorf("got %d members, want 3: %v", len(members), members)
	}
	if got := leader.Stats()["state"]; got != "Leader" {
		t.Errorf("Stats()[state] = %q, want Leader", got)
	}
}

func TestNode_SingleNodeBootstrap(t *testing.T) {
	c := &cluster{t: t, net: NewInmemNetwork(), nodes: map[string]*Node{}, fsms: map[string]*testFSM{},
		cfgs: map[string]Config{}}
	cfg := fastConfig(t, "solo")
	cfg.InMemory, cfg.Network, cfg.Bootstrap = true, c.net, true
	n := c.start(cfg, &testFSM{})
	c.waitLeader()
	applyAll(t, n, "a", "b")
	if got := c.fsms["solo"].commands(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("got %v, want [a b]", got)
	}
	if n.AppliedIndex() == 0 {
		t.Error("AppliedIndex() = 0 after applies")
	}
	if !n.Running() {
		t.Fatal("Running() = false on a live node")
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if n.Running() {
		t.Fatal("Running() = true after Shutdown")
	}
}

func TestNode_ApplyReplicates(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	leader := c.waitLeader()
	want := seq("cmd", 20)
	applyAll(t, leader, want...)
	c.waitSame(want, c.ids...)

	// A domain failure is a result, not an error.
	v, err := leader.Apply(context.Background(), []byte("fail:nope"))
	if err != nil {
		t.Fatalf("Apply(fail:nope) error = %v, want nil", err)
	}
	if e, ok := v.(error); !ok || e.Error() != "fail:nope" {
		t.Fatalf("Apply(fail:nope) = %v, want error fail:nope", v)
	}
	if err := leader.Barrier(context.Background()); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
}

func TestNode_ApplyOnFollowerReturnsNotLeader(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	leader := c.waitLeader()
	for id, n := range c.nodes {
		if n == leader {
			continue
		}
		_, err := n.Apply(context.Background(), []byte("x"))
		if !errors.Is(err, ErrNotLeader) {
			t.Fatalf("%s: Apply error = %v, want ErrNotLeader", id, err)
		}
		var nl *NotLeaderError
		if !errors.As(err, &nl) || nl.LeaderID != leader.ID() || nl.LeaderAddr != leader.Addr() {
			t.Fatalf("%s: error %v does not name leader %s", id, err, leader.ID())
		}
		if err := n.Join(context.Background(), "n9", "n9"); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("%s: Join error = %v, want ErrNotLeader", id, err)
		}
		if err := n.Remove(context.Background(), "n1"); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("%s: Remove error = %v, want ErrNotLeader", id, err)
		}
	}
}

func TestNode_GroupCommitBatches(t *testing.T) {
	const commands, maxBatch = 1000, 64
	c := newInmemCluster(t, 3, func(cfg *Config) { cfg.MaxBatch = maxBatch })
	leader := c.waitLeader()
	// Hold the leader's FSM so the first entries stay in flight while every caller queues.
	fsm := c.fsms[leader.ID()]
	gate := fsm.hold()

	var wg sync.WaitGroup
	errs := make(chan error, commands)
	for i := range commands {
		wg.Go(func() {
			cmd := fmt.Sprintf("c%d", i)
			v, err := leader.Apply(context.Background(), []byte(cmd))
			if err == nil && v != "ok:"+cmd {
				err = fmt.Errorf("Apply(%s) = %v, want its own result", cmd, v)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	waitFor(t, 5*time.Second, func() error {
		if p := leader.batcher.pending.Load(); p != commands {
			return fmt.Errorf("%d applies pending, want %d", p, commands)
		}
		return nil
	})
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	sizes := fsm.batchSizes()
	total := 0
	for _, s := range sizes {
		total += s
		if s > maxBatch {
			t.Errorf("batch of %d commands, want at most MaxBatch %d", s, maxBatch)
		}
	}
	if total != commands {
		t.Fatalf("FSM applied %d commands, want %d", total, commands)
	}
	// At most MaxInFlight entries can have formed before the FSM was released; the rest
	// are full batches.
	limit := leader.cfg.MaxInFlight + commands/maxBatch + 1
	if len(sizes) > limit {
		t.Errorf("%d ApplyBatch calls for %d commands, want at most %d", len(sizes), commands, limit)
	}
	t.Logf("%d commands in %d entries: %v", commands, len(sizes), sizes)
	c.waitSame(fsm.commands(), c.ids...)
}

func TestNode_ApplyTimeoutAndCancel(t *testing.T) {
	c := newInmemCluster(t, 3, func(cfg *Config) { cfg.ApplyTimeout = 200 * time.Millisecond })
	leader := c.waitLeader()
	gate := c.fsms[leader.ID()].hold()
	t.Cleanup(func() { close(gate) })

	_, err := leader.Apply(context.Background(), []byte("slow"))
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Apply error = %v, want ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := leader.Apply(ctx, []byte("cancelled")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Apply with cancelled context: error = %v, want context.Canceled", err)
	}
}

func TestNode_ShutdownFailsApply(t *testing.T) {
	c := newInmemCluster(t, 1, nil)
	leader := c.waitLeader()
	applyAll(t, leader, "a")
	if err := leader.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := leader.Shutdown(); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if _, err := leader.Apply(context.Background(), []byte("b")); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Apply after Shutdown: error = %v, want ErrShutdown", err)
	}
	select {
	case v := <-leader.LeaderChanges():
		if v {
			t.Fatal("LeaderChanges after Shutdown = true, want false")
		}
	default:
		t.Fatal("LeaderChanges has no value after Shutdown")
	}
}

func TestNode_LeaderFailover(t *testing.T) {
	c := newInmemCluster(t, 3, nil)
	old := c.waitLeader()
	first := seq("a", 10)
	applyAll(t, old, first...)
	c.waitSame(first, c.ids...)

	start := time.Now()
	c.stop(old.ID())
	rest := c.except(old.ID())
	leader := c.waitLeader(rest...)
	t.Logf("new leader %s after %s", leader.ID(), time.Since(start))
	second := seq("b", 10)
	applyAll(t, leader, second...)
	c.waitSame(append(first, second...), rest...)
}
