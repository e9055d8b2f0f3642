package raftstore

import (
	"errors"
	"testing"
	"time"
)

// stuckFuture is an ApplyFuture Raft never answers, as one left in its
// apply queue when it shut down; answered ones carry err.
type stuckFuture struct {
	answer chan error
}

func (f stuckFuture) Error() error  { return <-f.answer }
func (f stuckFuture) Response() any { return nil }
func (f stuckFuture) Index() uint64 { return 0 }

// TestBatcher_outcomeAfterRaftDown: an entry Raft answers gets its answer;
// one Raft never answers, once Raft is down, gets ErrShutdown instead of
// holding the node's shutdown for ever.
func TestBatcher_outcomeAfterRaftDown(t *testing.T) {
	b := &batcher{raftDown: make(chan struct{})}
	answered := stuckFuture{answer: make(chan error, 1)}
	want := errors.New("the entry's own error")
	answered.answer <- want
	if err := b.outcome(answered); err != want {
		t.Fatalf("an answered entry: %v, want %v", err, want)
	}
	stuck := stuckFuture{answer: make(chan error)}
	defer close(stuck.answer) // lets the waiting goroutine end with the test
	got := make(chan error, 1)
	go func() { got <- b.outcome(stuck) }()
	close(b.raftDown)
	select {
	case err := <-got:
		if !errors.Is(err, ErrShutdown) {
			t.Fatalf("an entry Raft dropped: %v, want ErrShutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an entry Raft dropped held its callers after Raft shut down")
	}
}
