package raftstore

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// TestClosingStable: once closed, the stable store drops writes (a
// heartbeat still under way when its node stopped must not make Raft
// panic) and refuses reads; before, it passes both through.
func TestClosingStable(t *testing.T) {
	t.Parallel()
	inner := raft.NewInmemStore()
	s := &closingStable{StableStore: inner}
	if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 3 {
		t.Fatalf("got %d %v, want 3", v, err)
	}
	closed := false
	if err := s.close(func() error { closed = true; return nil }); err != nil || !closed {
		t.Fatalf("close: %v, underlying closed %v", err, closed)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 4); err != nil {
		t.Fatalf("write after close: %v, want it dropped without error", err)
	}
	if err := s.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatalf("write after close: %v", err)
	}
	if v, _ := inner.GetUint64([]byte("CurrentTerm")); v != 3 {
		t.Fatalf("underlying store holds %d after a dropped write, want 3", v)
	}
	if _, err := s.GetUint64([]byte("CurrentTerm")); !errors.Is(err, errStableClosed) {
		t.Fatalf("read after close: %v, want errStableClosed", err)
	}
	if _, err := s.Get([]byte("k")); !errors.Is(err, errStableClosed) {
		t.Fatalf("read after close: %v, want errStableClosed", err)
	}
}
