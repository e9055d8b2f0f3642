package master

import (
	"context"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// store answers a principal's store call: reads from the leader's state,
// writes through Raft. The principal is the one the NATS servers
// authenticated for the subject, so no call reaches another principal's
// entries.
func (l *leader) store(ctx context.Context, c caller, r *protocol.StoreRequest) (*protocol.StoreReply, error) {
	switch r.Op {
	case protocol.StoreGet:
		e, ok := l.view().StoreGet(c.principal, r.Key)
		if !ok {
			return &protocol.StoreReply{}, nil
		}
		return &protocol.StoreReply{Found: true, Item: storeItem(e)}, nil
	case protocol.StoreList:
		limit := r.Limit
		if limit == 0 {
			limit = protocol.MaxStoreListLen
		}
		entries, more := l.view().StoreList(c.principal, r.Prefix, r.After, limit)
		reply := &protocol.StoreReply{More: more, Items: make([]protocol.StoreItem, 0, len(entries))}
		for _, e := range entries {
			reply.Items = append(reply.Items, storeItem(e))
		}
		return reply, nil
	case protocol.StorePut:
		res, err := l.apply(ctx, state.CmdStorePut, state.StorePut{Principal: c.principal, Key: r.Key, Value: r.Value,
			Create: r.Create, IfRevision: r.IfRevision})
		if err != nil {
			return nil, err
		}
		rev, _ := res.(uint64)
		return &protocol.StoreReply{Revision: rev}, nil
	default: // delete: Validate admits no other op
		res, err := l.apply(ctx, state.CmdStoreDelete, state.StoreDelete{Principal: c.principal, Key: r.Key, IfRevision: r.IfRevision})
		if err != nil {
			return nil, err
		}
		found, _ := res.(bool)
		return &protocol.StoreReply{Found: found}, nil
	}
}

func storeItem(e *state.StoreEntry) protocol.StoreItem {
	return protocol.StoreItem{Key: e.Key, Value: e.Value, Revision: e.Revision}
}
