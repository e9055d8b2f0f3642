package master

import (
	"context"

	"github.com/allot-project/allot/protocol"
)

// principalStore is a principal's store as the leader serves it (reads
// from its state, writes through Raft): what the HTTP API changes jobs
// through, as `allot jobs` does through NATS.
type principalStore struct {
	l         *leader
	principal string
}

func (s principalStore) do(ctx context.Context, r protocol.StoreRequest) (*protocol.StoreReply, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return s.l.store(ctx, caller{kind: protocol.KindFramework, principal: s.principal}, &r)
}

func (s principalStore) Get(ctx context.Context, key string) (protocol.StoreItem, bool, error) {
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StoreGet, Key: key})
	if err != nil {
		return protocol.StoreItem{}, false, err
	}
	return reply.Item, reply.Found, nil
}

func (s principalStore) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return s.put(ctx, protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: value})
}

func (s principalStore) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	return s.put(ctx, protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: value, Create: true})
}

func (s principalStore) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	return s.put(ctx, protocol.StoreRequest{Op: protocol.StorePut, Key: key, Value: value, IfRevision: rev})
}

func (s principalStore) put(ctx context.Context, r protocol.StoreRequest) (uint64, error) {
	reply, err := s.do(ctx, r)
	if err != nil {
		return 0, err
	}
	return reply.Revision, nil
}

func (s principalStore) Delete(ctx context.Context, key string, rev uint64) (bool, error) {
	reply, err := s.do(ctx, protocol.StoreRequest{Op: protocol.StoreDelete, Key: key, IfRevision: rev})
	if err != nil {
		return false, err
	}
	return reply.Found, nil
}
