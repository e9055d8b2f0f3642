package testcluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// ackLoop acknowledges status updates in batches: whatever queued while
// the previous batch was in flight goes in the next request.
func (f *TestFramework) ackLoop(ctx context.Context) {
	defer f.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.ackWake:
		}
		for {
			f.mu.Lock()
			n := min(len(f.ackQueue), protocol.MaxStatusBatch)
			batch := f.ackQueue[:n:n]
			f.ackQueue = f.ackQueue[n:]
			f.mu.Unlock()
			if n == 0 {
				break
			}
			f.acknowledge(ctx, batch)
		}
	}
}

func (f *TestFramework) acknowledge(ctx context.Context, acks []protocol.Acknowledgement) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.RetryTimeout)
	defer cancel()
	var reply protocol.AcknowledgeReply
	err := f.req.Retry(ctx, f.subject(protocol.VerbAcknowledge, f.ID()), protocol.MsgAcknowledgeRequest,
		protocol.AcknowledgeRequest{FrameworkID: f.ID(), Acks: acks}, &reply)
	refused := make(map[protocol.StatusUUID]error, len(reply.Refused))
	for _, r := range reply.Refused {
		refused[r.UUID] = r.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pendingAcks -= len(acks)
	for _, a := range acks {
		t := f.tasks[a.TaskID]
		err := err
		if err == nil {
			err = refused[a.UUID]
		}
		switch {
		case err == nil:
			t.acked = append(t.acked, a.UUID)
		case errors.Is(err, protocol.ErrUnknownTask):
			// The task left the table after its terminal update was
			// acknowledged: this one (by an earlier attempt or delivery),
			// or a later one that superseded it.
			if t.terminal(a.UUID) {
				t.acked = append(t.acked, a.UUID)
			}
		case errors.Is(err, protocol.ErrInvalidArgument):
			// Superseded by a newer update, which gets its own
			// acknowledgement.
		default:
			f.ackErrors = append(f.ackErrors, fmt.Errorf("acknowledge %s of %s: %w", a.UUID, a.TaskID, err))
		}
	}
}
