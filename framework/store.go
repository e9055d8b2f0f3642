package framework

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Store is the principal's store at the masters: small values kept
// replicated with the cluster's state, for a scheduler's own bookkeeping
// (its framework ID, its jobs), so that they survive the loss of a master
// and of the scheduler's process. A principal reaches only its own keys.
// Writes may be conditional on an entry's revision (compare and set).
// Store is safe for concurrent use.
type Store struct {
	// call returns what a call needs: the framework to name (empty for
	// none) and the requester.
	call  func() (protocol.FrameworkID, requester, error)
	owned *nats.Conn
}

// StoreItem is one entry of a store.
type StoreItem = protocol.StoreItem

// Store returns the framework principal's store, used through the
// driver's connection: its calls name the framework and are fenced by its
// session, so a scheduler that was taken over writes nothing more. It
// fails with ErrNotRunning before the first subscribe.
func (d *Driver) Store() *Store {
	return &Store{call: func() (protocol.FrameworkID, requester, error) { return d.session() }}
}

// OpenStore connects to the cluster, with the same options as NewDriver
// (URLs or a connection, principal and credentials), to reach the
// principal's store without a framework: a scheduler reads there, before
// it subscribes, the framework ID it resumes. Close releases the
// connection it made.
func OpenStore(opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.resolvePrincipal(); err != nil {
		return nil, err
	}
	subj := protocol.Subjects{Prefix: cfg.prefix}
	logger := cfg.logger.Named("store")
	nc, owned, err := dialNATS(cfg, subj, logger, func(err error) { logger.Error("refused", "error", err) })
	if err != nil {
		return nil, err
	}
	req := requester{nc: nc, subj: subj, timeout: cfg.requestTimeout, principal: cfg.principal}
	s := &Store{call: func() (protocol.FrameworkID, requester, error) { return "", req, nil }}
	if owned {
		s.owned = nc
	}
	return s, nil
}

// Close closes the connection OpenStore made, if any.
func (s *Store) Close() {
	if s.owned != nil {
		s.owned.Close()
	}
}

func (s *Store) do(ctx context.Context, r protocol.StoreRequest, retry bool) (protocol.StoreReply, error) {
	id, req, err := s.call()
	if err != nil {
		return protocol.StoreReply{}, err
	}
	r.FrameworkID = id
	var reply protocol.StoreReply
	if retry {
		err = req.retry(ctx, protocol.VerbStore, r, &reply, nil)
	} else {
		err = req.once(ctx, protocol.VerbStore, r, &reply)
	}
	return reply, err
}

// Get returns the entry for key, and false when there is none.
func (s *Store) Get(ctx context.Context, key string) (StoreItem, bool, error) {
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StoreGet, Key: key}, true)
	return reply.Item, reply.Found, err
}

// Put writes value under key, whatever is there, and returns the entry's
// new revision.
func (s *Store) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: value}, true)
	return reply.Revision, err
}

// Create writes value under key only if the key has no entry; otherwise
// it fails with protocol.ErrConflict. It is not retried: a lost reply
// leaves the outcome to be read with Get.
func (s *Store) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: value, Create: true}, false)
	return reply.Revision, err
}

// Update writes value under key only if the entry is at revision rev;
// otherwise it fails with protocol.ErrConflict. It is not retried.
func (s *Store) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if rev == 0 {
		return 0, fmt.Errorf("%w: update at revision 0", protocol.ErrInvalidArgument)
	}
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: value, IfRevision: rev}, false)
	return reply.Revision, err
}

// Delete removes key's entry (only at revision rev when rev is not 0) and
// reports whether there was one.
func (s *Store) Delete(ctx context.Context, key string, rev uint64) (bool, error) {
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StoreDelete, Key: key, IfRevision: rev}, rev == 0)
	return reply.Found, err
}

// List returns every entry whose key starts with prefix, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]StoreItem, error) {
	var out []StoreItem
	after := ""
	for {
		reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StoreList, Prefix: prefix, After: after}, true)
		if err != nil {
			return nil, err
		}
		out = append(out, reply.Items...)
		if !reply.More || len(reply.Items) == 0 {
			return out, nil
		}
		after = reply.Items[len(reply.Items)-1].Key
	}
}
