package framework

import (
	"context"
	"sync"

	"github.com/allot-project/allot/protocol"
)

// itemKind says what a queued item is.
type itemKind int

const (
	// itemEvent is a decoded event from the framework's event subject.
	itemEvent itemKind = iota
	// itemLeader is a leader announcement.
	itemLeader
	// itemDisconnected: the NATS connection dropped.
	itemDisconnected
	// itemReconnected: the NATS connection is back.
	itemReconnected
	// itemStale: the leader stopped sending heartbeats.
	itemStale
	// itemError is an asynchronous error for Scheduler.Error.
	itemError
)

// item is one entry of the event queue.
type item struct {
	kind itemKind
	body any
	ann  protocol.LeaderAnnouncement
	err  error
}

// eventQueue is an unbounded FIFO between the goroutines that receive
// (NATS, status watcher, acknowledgements) and the one that calls the
// scheduler, so a slow scheduler never makes the NATS client drop
// messages.
type eventQueue struct {
	mu    sync.Mutex
	items []item
	wake  chan struct{}
}

func (q *eventQueue) init() { q.wake = make(chan struct{}, 1) }

func (q *eventQueue) push(it item) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop returns the oldest item, waiting for one until ctx ends.
func (q *eventQueue) pop(ctx context.Context) (item, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			it := q.items[0]
			q.items[0] = item{}
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = nil
			}
			q.mu.Unlock()
			return it, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return item{}, false
		case <-q.wake:
		}
	}
}
