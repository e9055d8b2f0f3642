package raftstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Group commit.
//
// Apply puts a request on the queue; one batcher goroutine turns queued requests into
// Raft log entries. It blocks only while the queue is empty or while MaxInFlight entries
// are already with Raft. Each time it may go on, it takes every request queued at that
// moment, up to MaxBatch commands and MaxBatchBytes bytes, without lingering for more,
// and hands them to raft.Apply as one batch frame. A completion goroutine per entry waits
// for the entry to be applied and gives each caller its own result. A lone request is
// therefore sent at once, and under load entries grow to whatever arrived while the
// previous ones were being written and replicated.
//
// Entries are handed to Raft by one goroutine in queue order, so commands commit in the
// order their Apply calls were queued.

// applyRequest is one command waiting for group commit.
type applyRequest struct {
	cmd []byte
	// gone is closed when the caller stopped waiting (its context ended). The batcher
	// skips such requests if it has not packed them yet.
	gone <-chan struct{}
	// resp receives exactly one response if the request is packed or failed; it is
	// buffered so the batcher never blocks on a caller.
	resp chan applyResponse
}

type applyResponse struct {
	value any
	err   error
}

// batcher owns the group-commit goroutine of one Node.
type batcher struct {
	raft         *raft.Raft
	logger       hclog.Logger
	maxBatch     int
	maxBytes     int
	applyTimeout time.Duration
	// translate maps Raft errors onto our sentinels.
	translate func(error) error

	queue chan *applyRequest
	slots chan struct{} // one token per entry in flight
	stop  <-chan struct{}
	// raftDown is closed once Raft has shut down: an entry whose future
	// is unanswered by then never will be (one still in Raft's apply
	// queue is dropped, not answered), and its callers get ErrShutdown.
	raftDown chan struct{}
	// drained is closed once run has returned: every request it took has
	// its response.
	drained chan struct{}
	carry   *applyRequest // taken from the queue but did not fit the previous batch

	inflight sync.WaitGroup

	// Counters for Stats and tests.
	entries  atomic.Uint64 // batch entries handed to Raft
	commands atomic.Uint64 // commands in those entries
	pending  atomic.Int64  // Apply calls that have not returned
}

func newBatcher(r *raft.Raft, cfg Config, logger hclog.Logger, translate func(error) error,
	stop <-chan struct{}) *batcher {
	return &batcher{
		raft:         r,
		logger:       logger,
		maxBatch:     cfg.MaxBatch,
		maxBytes:     cfg.MaxBatchBytes,
		applyTimeout: cfg.ApplyTimeout,
		translate:    translate,
		queue:        make(chan *applyRequest, 2*cfg.MaxBatch),
		slots:        make(chan struct{}, cfg.MaxInFlight),
		stop:         stop,
		raftDown:     make(chan struct{}),
		drained:      make(chan struct{}),
	}
}

// run is the batcher goroutine. It returns after stop is closed, once every request it
// took from the queue has a response.
func (b *batcher) run() {
	defer close(b.drained)
	defer b.drain()
	for {
		first := b.next()
		if first == nil {
			return
		}
		select {
		case b.slots <- struct{}{}:
		case <-b.stop:
			first.resp <- applyResponse{err: ErrShutdown}
			return
		}
		batch := b.collect(first)
		if len(batch) == 0 {
			<-b.slots
			continue
		}
		b.submit(batch)
	}
}

// next blocks for the first request of the next batch; nil means stop.
func (b *batcher) next() *applyRequest {
	if r := b.carry; r != nil {
		b.carry = nil
		return r
	}
	select {
	case r := <-b.queue:
		return r
	case <-b.stop:
		return nil
	}
}

// collect packs first plus whatever is queued right now, within the limits. A request
// that would overflow MaxBatchBytes is carried to the next batch; requests whose callers
// are gone are dropped.
func (b *batcher) collect(first *applyRequest) []*applyRequest {
	batch := make([]*applyRequest, 0, min(b.maxBatch, 1+len(b.queue)))
	size := frameHeaderMax
	add := func(r *applyRequest) bool {
		select {
		case <-r.gone:
			return true // caller gave up before we packed it: never sent
		default:
		}
		n := commandSize(len(r.cmd))
		if len(batch) > 0 && size+n > b.maxBytes {
			b.carry = r
			return false
		}
		if len(batch) == 0 && size+n > b.maxBytes {
			b.logger.Warn("command exceeds the batch size limit; sending it alone",
				"bytes", len(r.cmd), "limit", b.maxBytes)
		}
		batch = append(batch, r)
		size += n
		return true
	}
	if !add(first) {
		return batch
	}
	for len(batch) < b.maxBatch {
		select {
		case r := <-b.queue:
			if !add(r) {
				return batch
			}
		default:
			return batch
		}
	}
	return batch
}

// submit hands one batch entry to Raft and starts its completion goroutine. It holds an
// in-flight slot, which the completion releases.
func (b *batcher) submit(batch []*applyRequest) {
	cmds := make([][]byte, len(batch))
	for i, r := range batch {
		cmds[i] = r.cmd
	}
	future := b.raft.Apply(encodeFrame(cmds), b.applyTimeout)
	b.entries.Add(1)
	b.commands.Add(uint64(len(batch)))
	b.inflight.Add(1)
	go b.complete(future, batch)
}

// complete waits for one entry and answers its callers.
func (b *batcher) complete(future raft.ApplyFuture, batch []*applyRequest) {
	defer b.inflight.Done()
	err := b.outcome(future)
	<-b.slots
	if err != nil {
		err = b.translate(err)
		for _, r := range batch {
			r.resp <- applyResponse{err: err}
		}
		return
	}
	results, _ := future.Response().(applyResults)
	for i, r := range batch {
		var v any
		if i < len(results) {
			v = results[i]
		}
		r.resp <- applyResponse{value: v}
	}
}

// outcome waits for an entry's future, or until Raft has shut down
// without answering it. The future is read on a goroutine of its own, so
// that it can be given up; one Raft dropped leaves that goroutine waiting
// until the process ends, which only a node's shutdown can cause.
func (b *batcher) outcome(future raft.ApplyFuture) error {
	answered := make(chan error, 1)
	go func() { answered <- future.Error() }()
	select {
	case err := <-answered:
		return err
	case <-b.raftDown:
		select {
		case err := <-answered:
			return err
		default:
			return ErrShutdown
		}
	}
}

// drain fails every request still queued and waits for the entries in flight.
func (b *batcher) drain() {
	if b.carry != nil {
		b.carry.resp <- applyResponse{err: ErrShutdown}
		b.carry = nil
	}
	for {
		select {
		case r := <-b.queue:
			r.resp <- applyResponse{err: ErrShutdown}
		default:
			b.inflight.Wait()
			return
		}
	}
}
