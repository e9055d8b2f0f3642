package jobs

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/allot-project/allot/protocol"
)

// memStore is a Store in memory with the masters' revision semantics:
// every write takes the next revision of one counter, Create fails on a
// key that exists, Update and a Delete at a revision fail unless the entry
// is at that revision.
type memStore struct {
	mu      sync.Mutex
	rev     uint64
	entries map[string]protocol.StoreItem
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{entries: map[string]protocol.StoreItem{}} }

func (s *memStore) Get(_ context.Context, key string) (protocol.StoreItem, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.entries[key]
	it.Value = slices.Clone(it.Value)
	return it, ok, nil
}

func (s *memStore) Put(_ context.Context, key string, value []byte) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(key, value), nil
}

func (s *memStore) Create(_ context.Context, key string, value []byte) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entries[key]; ok {
		return 0, fmt.Errorf("%w: key %q exists, at revision %d", protocol.ErrConflict, key, old.Revision)
	}
	return s.write(key, value), nil
}

func (s *memStore) Update(_ context.Context, key string, value []byte, rev uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev == 0 {
		return 0, fmt.Errorf("%w: update at revision 0", protocol.ErrInvalidArgument)
	}
	if old, ok := s.entries[key]; !ok || old.Revision != rev {
		return 0, fmt.Errorf("%w: key %q is not at revision %d", protocol.ErrConflict, key, rev)
	}
	return s.write(key, value), nil
}

func (s *memStore) Delete(_ context.Context, key string, rev uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.entries[key]
	if rev != 0 && (!ok || old.Revision != rev) {
		return false, fmt.Errorf("%w: key %q is not at revision %d", protocol.ErrConflict, key, rev)
	}
	if !ok {
		return false, nil
	}
	delete(s.entries, key)
	s.rev++
	return true, nil
}

// write sets key's entry at the next revision; s.mu is held.
func (s *memStore) write(key string, value []byte) uint64 {
	s.rev++
	s.entries[key] = protocol.StoreItem{Key: key, Value: slices.Clone(value), Revision: s.rev}
	return s.rev
}

// revision is the store's revision counter: it moves with every write.
func (s *memStore) revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// value is key's value, and whether the key has an entry.
func (s *memStore) value(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.entries[key]
	return string(it.Value), ok
}

// keys is every key with an entry, in order.
func (s *memStore) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.entries {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
