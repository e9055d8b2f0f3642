package raftstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// errApplyTimeout is the context cause when Config.ApplyTimeout ends an Apply.
var errApplyTimeout = fmt.Errorf("%w: apply timeout: %w", ErrTimeout, context.DeadlineExceeded)

// Apply replicates cmd through Raft and returns the result that FSM.ApplyBatch gave for
// it. Leader only: elsewhere it returns a *NotLeaderError at once.
//
// Concurrent calls are group-committed: the command is queued and shares a Raft log
// entry with whatever else is queued when the entry is formed. Apply takes ownership
// of cmd; the caller must not modify it afterwards, even if Apply returns early.
//
// The call is bounded by ctx and by Config.ApplyTimeout (ErrTimeout). A domain failure
// comes back as the result value, not as the error; the error reports replication only:
// ErrNotLeader, ErrLeadershipLost, ErrTimeout, ErrShutdown or the context's error.
// After ErrLeadershipLost, ErrTimeout, ErrShutdown or a context error the command may
// still be applied, so commands should be idempotent or carry IDs.
func (n *Node) Apply(ctx context.Context, cmd []byte) (any, error) {
	select {
	case <-n.shutdownCh:
		return nil, ErrShutdown
	default:
	}
	if !n.IsLeader() {
		return nil, n.notLeader()
	}
	b := n.batcher
	b.pending.Add(1)
	defer b.pending.Add(-1)
	if n.cfg.ApplyTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, n.cfg.ApplyTimeout, errApplyTimeout)
		defer cancel()
	}
	req := &applyRequest{cmd: cmd, gone: ctx.Done(), resp: make(chan applyResponse, 1)}
	select {
	case b.queue <- req:
	case <-ctx.Done():
		return nil, contextError(ctx)
	case <-n.shutdownCh:
		return nil, ErrShutdown
	}
	select {
	case r := <-req.resp:
		return r.value, r.err
	case <-ctx.Done():
		return nil, contextError(ctx)
	case <-n.stopped:
		// The batcher has answered everything it took; a request queued after its
		// final drain gets no answer.
		select {
		case r := <-req.resp:
			return r.value, r.err
		default:
			return nil, ErrShutdown
		}
	}
}

// contextError is the error for an Apply ended by ctx: its cause (ErrTimeout for our
// ApplyTimeout), wrapped.
func contextError(ctx context.Context) error {
	return fmt.Errorf("apply: %w", context.Cause(ctx))
}

// enqueueTimeout is the timeout to give a Raft call: the time left before ctx's
// deadline, else ApplyTimeout (zero means none).
func (n *Node) enqueueTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left > 0 {
			return left
		}
		return time.Nanosecond
	}
	return n.cfg.ApplyTimeout
}

// wait blocks until f resolves or ctx ends, and translates the result. If ctx ends
// first, the operation may still complete.
func (n *Node) wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }() // every Raft future resolves by Raft's shutdown
	select {
	case err := <-done:
		return n.translate(err)
	case <-ctx.Done():
		return fmt.Errorf("raft: %w", context.Cause(ctx))
	}
}
