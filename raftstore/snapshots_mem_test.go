package raftstore

import (
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// TestMemSnapshotStore: a snapshot is listed and opened only once its sink
// closed, a cancelled one never, and opening reads it whole each time.
func TestMemSnapshotStore(t *testing.T) {
	t.Parallel()
	s := &memSnapshotStore{}
	sink, err := s.Create(1, 10, 2, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write([]byte("state")); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Fatalf("listed %d snapshots while the first is being written", len(l))
	}
	if _, _, err := s.Open(sink.ID()); err == nil {
		t.Fatal("opened a snapshot still being written")
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	cancelled, _ := s.Create(1, 20, 2, raft.Configuration{}, 1, nil)
	if _, err := cancelled.Write([]byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := cancelled.Cancel(); err != nil {
		t.Fatal(err)
	}
	l, _ := s.List()
	if len(l) != 1 || l[0].ID != sink.ID() || l[0].Index != 10 || l[0].Size != 5 {
		t.Fatalf("listed %+v, want the closed snapshot at index 10 of 5 bytes", l)
	}
	for range 2 {
		meta, r, err := s.Open(sink.ID())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		if string(b) != "state" || meta.Term != 2 {
			t.Fatalf("read %q term %d, want state, 2", b, meta.Term)
		}
	}
}
