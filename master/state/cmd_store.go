package state

import (
	"fmt"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// The store keeps small values for each principal, replicated with the
// rest of the state, so that a framework's own bookkeeping (the job
// runner's jobs and versions) survives the loss of a master and of the
// framework's process. A principal sees only its own entries; every write
// may be made conditional on the entry's revision.

// Limits of the store.
const (
	MaxStoreKeyLen     = protocol.MaxStoreKeyLen
	MaxStoreValueSize  = protocol.MaxStoreValueSize
	MaxStoreKeys       = 10_000   // per principal
	MaxStoreBytes      = 32 << 20 // keys and values, per principal
	MaxStoreListResult = 1 << 20  // bytes of values one list returns
)

// StoreEntry is one key of a principal's store.
type StoreEntry struct {
	Principal string `msgpack:"principal"`
	Key       string `msgpack:"key"`
	Value     []byte `msgpack:"value"`
	// Revision is the Raft index of the write that set it.
	Revision uint64 `msgpack:"rev"`
}

func (e *StoreEntry) size() int64 { return int64(len(e.Key) + len(e.Value)) }

// StorePut writes a store entry. With Create it fails if the key exists;
// with IfRevision set, unless the entry is at that revision.
type StorePut struct {
	Principal  string `msgpack:"principal"`
	Key        string `msgpack:"key"`
	Value      []byte `msgpack:"value"`
	Create     bool   `msgpack:"create,omitempty"`
	IfRevision uint64 `msgpack:"if,omitempty"`
}

// StoreDelete removes a store entry; with IfRevision set, only if the
// entry is at that revision. Deleting a key that does not exist is not an
// error (unless IfRevision is set).
type StoreDelete struct {
	Principal  string `msgpack:"principal"`
	Key        string `msgpack:"key"`
	IfRevision uint64 `msgpack:"if,omitempty"`
}

func checkStorePrincipal(p string) error {
	if p != "" && !protocol.ValidPrincipal(p) {
		return errorf(protocol.ErrInvalidArgument, "principal %q", clip(p))
	}
	return nil
}

func (c *StorePut) validate() error {
	if err := checkStorePrincipal(c.Principal); err != nil {
		return err
	}
	if err := protocol.CheckStoreKey("key", c.Key); err != nil {
		return err
	}
	if len(c.Value) > MaxStoreValueSize {
		return errorf(protocol.ErrTooLarge, "store value of %d bytes, limit %d", len(c.Value), MaxStoreValueSize)
	}
	if c.Create && c.IfRevision != 0 {
		return errorf(protocol.ErrInvalidArgument, "a put is either a create or conditional on a revision")
	}
	return nil
}

func (c *StoreDelete) validate() error {
	if err := checkStorePrincipal(c.Principal); err != nil {
		return err
	}
	return protocol.CheckStoreKey("key", c.Key)
}

// storeKey is a store entry's key in the state: principal, then key.
func storeKey(principal, key string) string { return principal + keySep + key }

func (s *State) applyStorePut(index uint64, body []byte) (any, error) {
	var c StorePut
	if err := decode(CmdStorePut, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("store put: %w", err)
	}
	old, exists := s.cur.store.get(storeKey(c.Principal, c.Key))
	switch {
	case c.Create && exists:
		return nil, errorf(protocol.ErrConflict, "store key %q exists, at revision %d", clip(c.Key), old.Revision)
	case c.IfRevision != 0 && !exists:
		return nil, errorf(protocol.ErrConflict, "store key %q does not exist, want revision %d", clip(c.Key), c.IfRevision)
	case c.IfRevision != 0 && old.Revision != c.IfRevision:
		return nil, errorf(protocol.ErrConflict, "store key %q is at revision %d, want %d", clip(c.Key), old.Revision, c.IfRevision)
	}
	e := &StoreEntry{Principal: c.Principal, Key: c.Key, Value: c.Value, Revision: index}
	use := s.cur.StoreUsage(c.Principal)
	keys, bytes := use.Keys+1, use.Bytes+e.size()
	if exists {
		keys, bytes = keys-1, bytes-old.size()
	}
	if keys > MaxStoreKeys || bytes > MaxStoreBytes {
		return nil, errorf(protocol.ErrLimitExceeded, "principal %q's store would hold %d keys and %d bytes, limits %d and %d",
			clip(c.Principal), keys, bytes, MaxStoreKeys, MaxStoreBytes)
	}
	s.cur.store = s.cur.store.set(storeKey(c.Principal, c.Key), e)
	s.cur.storeUse = s.cur.storeUse.set(c.Principal, StoreUsage{Keys: keys, Bytes: bytes})
	return e.Revision, nil
}

func (s *State) applyStoreDelete(_ uint64, body []byte) (any, error) {
	var c StoreDelete
	if err := decode(CmdStoreDelete, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("store delete: %w", err)
	}
	old, exists := s.cur.store.get(storeKey(c.Principal, c.Key))
	if c.IfRevision != 0 && (!exists || old.Revision != c.IfRevision) {
		return nil, errorf(protocol.ErrConflict, "store key %q is not at revision %d", clip(c.Key), c.IfRevision)
	}
	if !exists {
		return false, nil
	}
	s.cur.store = s.cur.store.delete(storeKey(c.Principal, c.Key))
	s.cur.dropStoreUse(c.Principal, old)
	return true, nil
}

// dropStoreUse takes an entry out of its principal's usage.
func (v *View) dropStoreUse(principal string, e *StoreEntry) {
	use := v.StoreUsage(principal)
	use.Keys, use.Bytes = use.Keys-1, use.Bytes-e.size()
	if use.Keys == 0 {
		v.storeUse = v.storeUse.delete(principal)
		return
	}
	v.storeUse = v.storeUse.set(principal, use)
}

// StoreUsage is what a principal's store holds.
type StoreUsage struct {
	Keys  int
	Bytes int64
}

// StoreUsage returns what principal's store holds.
func (v *View) StoreUsage(principal string) StoreUsage {
	u, _ := v.storeUse.get(principal)
	return u
}

// StoreGet returns principal's entry for key.
func (v *View) StoreGet(principal, key string) (*StoreEntry, bool) {
	return v.store.get(storeKey(principal, key))
}

// StoreList returns principal's entries whose keys start with prefix and
// sort after after, in key order, at most limit of them and values of at
// most MaxStoreListResult bytes in all (at least one entry), and whether
// more follow.
func (v *View) StoreList(principal, prefix, after string, limit int) (entries []*StoreEntry, more bool) {
	lo, hi := storeKey(principal, prefix), principal+"\x01"
	if after != "" && storeKey(principal, after) >= lo {
		lo = storeKey(principal, after) + "\x00"
	}
	size := 0
	v.store.ascend(lo, hi, func(_ string, e *StoreEntry) bool {
		if !strings.HasPrefix(e.Key, prefix) {
			return false
		}
		if len(entries) == limit || len(entries) > 0 && size+len(e.Value) > MaxStoreListResult {
			more = true
			return false
		}
		entries, size = append(entries, e), size+len(e.Value)
		return true
	})
	return entries, more
}

// StorePrincipals returns the principals whose store holds anything, in
// order.
func (v *View) StorePrincipals() []string {
	var out []string
	v.storeUse.ascend("", "", func(p string, _ StoreUsage) bool {
		out = append(out, p)
		return true
	})
	return out
}
