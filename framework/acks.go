package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/allot-project/allot/protocol"
)

// ackEntry is one queued acknowledgement; done, when set, receives its
// outcome.
type ackEntry struct {
	ack  protocol.Acknowledgement
	done chan error
}

// ackQueue holds acknowledgements until the ack loop sends them. Whatever
// queues while a batch is in flight goes in the next request.
type ackQueue struct {
	mu      sync.Mutex
	entries []ackEntry
	closed  error
	wake    chan struct{}
}

func (q *ackQueue) init() { q.wake = make(chan struct{}, 1) }

// add queues e, or fails it at once when the queue is closed.
func (q *ackQueue) add(e ackEntry) {
	q.mu.Lock()
	if q.closed != nil {
		err := q.closed
		q.mu.Unlock()
		if e.done != nil {
			e.done <- err
		}
		return
	}
	q.entries = append(q.entries, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take removes up to n entries from the front.
func (q *ackQueue) take(n int) []ackEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.entries))
	out := q.entries[:n:n]
	q.entries = q.entries[n:]
	if len(q.entries) == 0 {
		q.entries = nil
	}
	return out
}

// close fails every queued entry and every later one with err.
func (q *ackQueue) close(err error) {
	q.mu.Lock()
	q.closed = err
	entries := q.entries
	q.entries = nil
	q.mu.Unlock()
	for _, e := range entries {
		if e.done != nil {
			e.done <- err
		}
	}
}

// ackLoop sends queued acknowledgements in batches of at most
// protocol.MaxStatusBatch.
func (d *Driver) ackLoop(ctx context.Context) {
	defer d.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.acks.wake:
		}
		for ctx.Err() == nil {
			batch := d.acks.take(protocol.MaxStatusBatch)
			if len(batch) == 0 {
				break
			}
			d.sendAcks(ctx, batch)
		}
	}
}

// sendAcks sends one batch, retrying while no leader answers. Refusals of
// stale updates (a later one superseded them) and of tasks the master no
// longer holds (removed after their terminal update was acknowledged) are
// harmless and count as success.
func (d *Driver) sendAcks(ctx context.Context, batch []ackEntry) {
	d.mu.Lock()
	id, req := d.id, d.req
	d.mu.Unlock()
	acks := make([]protocol.Acknowledgement, len(batch))
	for i, e := range batch {
		acks[i] = e.ack
	}
	var reply protocol.AcknowledgeReply
	err := req.retry(ctx, protocol.VerbAcknowledge, protocol.AcknowledgeRequest{FrameworkID: id, Acks: acks}, &reply, nil)
	if err != nil {
		err = fmt.Errorf("acknowledge: %w", err)
		d.checkFatal(err)
	}
	refused := make(map[protocol.StatusUUID]error, len(reply.Refused))
	for _, r := range reply.Refused {
		refused[r.UUID] = r.Err()
	}
	failed := 0
	var last error
	for _, e := range batch {
		res := err
		if res == nil {
			if rerr := refused[e.ack.UUID]; rerr != nil && !harmlessRefusal(rerr) {
				res = fmt.Errorf("acknowledge %s of task %s: %w", e.ack.UUID, e.ack.TaskID, rerr)
			}
		}
		if e.done != nil {
			e.done <- res
			continue
		}
		if res != nil {
			failed++
			last = res
		}
	}
	d.logger.Trace("acknowledged", "count", len(batch), "refused", len(reply.Refused))
	if failed > 0 && ctx.Err() == nil && !isGone(last) {
		d.logger.Warn("acknowledgements failed", "count", failed, "error", last)
		d.queue.push(item{kind: itemError, err: last})
	}
}

// harmlessRefusal reports refused acknowledgements that need nothing more.
func harmlessRefusal(err error) bool {
	return errors.Is(err, protocol.ErrUnknownTask) || errors.Is(err, protocol.ErrInvalidArgument)
}

// Acknowledge acknowledges a status update, so the master stops resending
// it; with WithManualAcks the scheduler must call it for every update
// that carries a UUID (others need none, and return nil at once). It is
// batched with other acknowledgements and returns when its batch was
// answered. Acknowledgements of superseded updates or of tasks the master
// no longer holds succeed.
func (d *Driver) Acknowledge(ctx context.Context, st protocol.TaskStatus) error {
	if st.UUID == "" {
		return nil
	}
	if _, _, err := d.session(); err != nil {
		return err
	}
	d.mu.Lock()
	d.seen.acked(st.UUID)
	d.mu.Unlock()
	done := make(chan error, 1)
	d.acks.add(ackEntry{ack: protocol.Acknowledgement{AgentID: st.AgentID, TaskID: st.TaskID, UUID: st.UUID}, done: done})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dedupWindow is how many status update UUIDs the driver remembers to
// drop duplicates.
const dedupWindow = 8192

// uuidWindow remembers the last status update UUIDs seen, and whether
// the scheduler acknowledged each one (manual acknowledgements).
type uuidWindow struct {
	state map[protocol.StatusUUID]bool // UUID -> acknowledged by the scheduler
	ring  []protocol.StatusUUID
	next  int
}

func newUUIDWindow(n int) uuidWindow {
	return uuidWindow{state: make(map[protocol.StatusUUID]bool, n), ring: make([]protocol.StatusUUID, n)}
}

// observe records an update and says whether to deliver it (first time
// seen) and, for a duplicate, whether to acknowledge it again: always with
// automatic acknowledgements, and once the scheduler acknowledged it with
// manual ones (the master resends updates whose acknowledgement it did not
// record, so the earlier one may have been lost).
func (w *uuidWindow) observe(uuid protocol.StatusUUID, manual bool) (deliver, reack bool) {
	acked, seen := w.state[uuid]
	if seen {
		return false, !manual || acked
	}
	if old := w.ring[w.next]; old != "" {
		delete(w.state, old)
	}
	w.ring[w.next] = uuid
	w.next = (w.next + 1) % len(w.ring)
	w.state[uuid] = false
	return true, false
}

// acked records that the scheduler acknowledged uuid.
func (w *uuidWindow) acked(uuid protocol.StatusUUID) {
	if _, ok := w.state[uuid]; ok {
		w.state[uuid] = true
	}
}
