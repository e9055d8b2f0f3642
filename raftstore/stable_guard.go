package raftstore

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"
)

// errStableClosed answers reads of the stable store once it is closed.
var errStableClosed = errors.New("raft stable store closed")

// closingStable guards the stable store against writes that come after its
// node shut down. Raft handles heartbeats on the transport's connection
// goroutines, outside its main loop, so one already under way when Raft
// stops can save a new term after the store is closed, and Raft panics on
// any failure to save a term (hashicorp/raft#717). Once closed, writes are
// dropped: the node is gone, and a restarted one learns the term again from
// the leader. Votes and log entries are written only by the main loop,
// which has stopped by then.
type closingStable struct {
	raft.StableStore
	mu     sync.RWMutex
	closed bool
}

// close marks the store closed and then closes the one underneath; no
// write is in progress once it returns.
func (s *closingStable) close(closeStore func() error) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return closeStore()
}

func (s *closingStable) Set(key, val []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.StableStore.Set(key, val)
}

func (s *closingStable) SetUint64(key []byte, val uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.StableStore.SetUint64(key, val)
}

func (s *closingStable) Get(key []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errStableClosed
	}
	return s.StableStore.Get(key)
}

func (s *closingStable) GetUint64(key []byte) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, errStableClosed
	}
	return s.StableStore.GetUint64(key)
}
