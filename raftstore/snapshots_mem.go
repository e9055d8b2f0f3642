package raftstore

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// memSnapshotStore keeps the latest complete snapshot in memory, for nodes
// that keep everything there (Config.InMemory). Raft's own in-memory store
// publishes a snapshot when it is created, so a follower being caught up
// could be sent one still being written (and the race detector sees the
// buffer read while it grows); here a snapshot is published only when its
// sink closes.
type memSnapshotStore struct {
	mu     sync.RWMutex
	latest *memSnapshot // nil until the first snapshot completes
}

type memSnapshot struct {
	meta raft.SnapshotMeta
	data []byte // never changed once published
}

// memSink is a snapshot being written.
type memSink struct {
	store *memSnapshotStore
	meta  raft.SnapshotMeta
	buf   bytes.Buffer
}

func (s *memSnapshotStore) Create(version raft.SnapshotVersion, index, term uint64,
	configuration raft.Configuration, configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version != 1 {
		return nil, fmt.Errorf("unsupported snapshot version %d", version)
	}
	return &memSink{store: s, meta: raft.SnapshotMeta{
		Version: version, ID: fmt.Sprintf("%d-%d-%d", term, index, time.Now().UnixMilli()),
		Index: index, Term: term, Configuration: configuration, ConfigurationIndex: configurationIndex,
	}}, nil
}

func (s *memSnapshotStore) List() ([]*raft.SnapshotMeta, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.latest == nil {
		return nil, nil
	}
	meta := s.latest.meta
	return []*raft.SnapshotMeta{&meta}, nil
}

func (s *memSnapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.latest == nil || s.latest.meta.ID != id {
		return nil, nil, fmt.Errorf("open snapshot %s: no such snapshot", id)
	}
	meta := s.latest.meta
	return &meta, io.NopCloser(bytes.NewReader(s.latest.data)), nil
}

func (k *memSink) Write(p []byte) (int, error) { return k.buf.Write(p) }
func (k *memSink) ID() string                  { return k.meta.ID }
func (k *memSink) Cancel() error               { return nil }

// Close publishes the snapshot as the latest.
func (k *memSink) Close() error {
	k.meta.Size = int64(k.buf.Len())
	snap := &memSnapshot{meta: k.meta, data: bytes.Clone(k.buf.Bytes())}
	k.store.mu.Lock()
	k.store.latest = snap
	k.store.mu.Unlock()
	return nil
}
