package executor

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// This file holds the reliable status updates: every update gets a fresh
// UUID, is checkpointed with its task before it is sent (the sender skips
// a task whose latest record change is not on disk yet), and is sent
// (batched across tasks, all queued updates of one task in one request,
// in order) until the master acknowledges it, by the request's reply or
// by an AckCommand. An update the master refuses can never apply (its task
// is gone or already terminal there); it is logged and dropped.

// enqueueLocked creates a status update for t with a fresh UUID, queues
// it, records st as the task's state and checkpoints the task.
func (a *Agent) enqueueLocked(t *task, st protocol.TaskState, reason, msg string, code *int) {
	if t.abandoned || t.rec.State.Terminal() {
		return
	}
	status := newStatus(t, a.ID(), st, reason, msg, code)
	uuid := protocol.NewStatusUUID()
	status.UUID = uuid
	u := protocol.StatusUpdate{Status: status, UUID: uuid}
	t.rec.State = st
	t.rec.Latest = &u
	t.rec.Queue = append(t.rec.Queue, u)
	level := t.log.Debug
	if st.Terminal() {
		level = t.log.Info
		a.gc.nudge()
	}
	level("task status", "state", st, "reason", reason, "uuid", uuid)
	a.tasks.persistLocked(t) // the flusher wakes the sender once it is on disk
}

// ack drops acknowledged updates from their tasks' queues.
func (a *Agent) ack(acks []protocol.StatusAck) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	touched := map[*task]bool{}
	for _, ack := range acks {
		t, ok := a.tasks.live[taskKey{ack.FrameworkID, ack.TaskID}]
		if ok && dropUpdate(t, ack.UUID) {
			touched[t] = true
		}
	}
	for t := range touched {
		a.tasks.persistLocked(t)
	}
}

// dropUpdate removes the update uuid from t's queue and reports whether
// it was there.
func dropUpdate(t *task, uuid protocol.StatusUUID) bool {
	i := slices.IndexFunc(t.rec.Queue, func(u protocol.StatusUpdate) bool { return u.UUID == uuid })
	if i < 0 {
		return false
	}
	t.rec.Queue = slices.Delete(t.rec.Queue, i, i+1)
	if len(t.rec.Queue) == 0 {
		t.lastSent = time.Time{}
	}
	return true
}

// sendLoop sends the queued updates of every task that has some and is not
// waiting for an answer, when they are new or their resend interval has
// passed.
func (a *Agent) sendLoop(ctx context.Context) {
	defer a.wg.Done()
	tick := time.NewTicker(max(a.cfg.ResendInterval/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.wake:
		}
		a.flush(ctx, time.Now())
	}
}

// batch is one status update request: whole queues of tasks, in order.
type batch struct {
	tasks   []*task
	updates []protocol.StatusUpdate
	size    int
}

// maxBatchBytes bounds the estimated size of one request, well under
// protocol.MaxMessageSize.
const maxBatchBytes = 1 << 20

// updateSize estimates the encoded size of an update.
func updateSize(u protocol.StatusUpdate) int {
	return 256 + len(u.Status.Message) + len(u.Status.Reason) + len(u.Status.TaskID) + len(u.Status.FrameworkID)
}

func (a *Agent) flush(ctx context.Context, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.registered || a.stopping {
		return
	}
	a.tasks.mu.Lock()
	batches := a.tasks.takeBatchesLocked(now, a.cfg.ResendInterval)
	a.tasks.mu.Unlock()
	id := a.ID()
	a.wg.Add(len(batches))
	for _, b := range batches {
		go a.sendBatch(ctx, id, b)
	}
}

// takeBatchesLocked gathers the queues due to be sent (new, or last sent
// resend ago or earlier) into requests and marks their tasks in flight. A
// task whose latest record change is not on disk yet waits: the flusher
// wakes the sender once it is.
func (s *taskStore) takeBatchesLocked(now time.Time, resend time.Duration) []*batch {
	var batches []*batch
	cur := &batch{}
	for _, t := range s.live {
		if len(t.rec.Queue) == 0 || t.inflight || !s.durableLocked(t) ||
			!t.lastSent.IsZero() && now.Sub(t.lastSent) < resend {
			continue
		}
		// The task's queue, or as much of its head as fits in a request.
		n, size := 0, 0
		for _, u := range t.rec.Queue {
			if n == protocol.MaxStatusBatch || n > 0 && size+updateSize(u) > maxBatchBytes {
				break
			}
			n, size = n+1, size+updateSize(u)
		}
		if len(cur.updates) > 0 && (t.solo || len(cur.updates)+n > protocol.MaxStatusBatch || cur.size+size > maxBatchBytes) {
			batches, cur = append(batches, cur), &batch{}
		}
		t.inflight, t.lastSent = true, now
		cur.tasks = append(cur.tasks, t)
		cur.updates = append(cur.updates, t.rec.Queue[:n]...)
		cur.size += size
		if t.solo {
			batches, cur = append(batches, cur), &batch{}
		}
	}
	if len(cur.updates) > 0 {
		batches = append(batches, cur)
	}
	return batches
}

func (a *Agent) sendBatch(ctx context.Context, id protocol.AgentID, b *batch) {
	defer a.wg.Done()
	updates := slices.Clone(b.updates)
	for i := range updates {
		updates[i].Status.AgentID = id
	}
	var reply protocol.StatusUpdateReply
	err := a.req.once(ctx, protocol.MsgStatusUpdateRequest,
		protocol.StatusUpdateRequest{AgentID: id, Updates: updates}, &reply)
	a.tasks.mu.Lock()
	for _, t := range b.tasks {
		t.inflight = false
	}
	a.tasks.mu.Unlock()
	switch {
	case err == nil:
	case errors.Is(err, protocol.ErrUnknownAgent):
		a.log.Info("the leader does not know this agent; reregistering")
		a.wantReregister()
		return
	case ctx.Err() != nil:
		return
	case poison(err):
		a.isolate(b, err)
		return
	case natsclient.Retryable(err):
		a.log.Debug("status updates not delivered; resending later", "updates", len(updates), "error", err)
		return
	default:
		a.log.Warn("status update request refused; resending later", "updates", len(updates), "error", err)
		return
	}
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	refused := make(map[protocol.StatusUUID]error, len(reply.Refused))
	for _, r := range reply.Refused {
		refused[r.UUID] = r.Err()
	}
	touched := map[*task]bool{}
	for _, u := range b.updates {
		t, ok := a.tasks.live[taskKey{u.Status.FrameworkID, u.Status.TaskID}]
		if !ok {
			continue
		}
		if err, bad := refused[u.UUID]; bad {
			// The master will never take it: keeping it would resend it
			// forever.
			if dropUpdate(t, u.UUID) {
				level := t.log.Warn
				if t.rec.Unknown {
					level = t.log.Debug
				}
				level("status update refused", "uuid", u.UUID, "state", u.Status.State, "error", err)
				touched[t] = true
			}
			continue
		}
		// In Raft: the reply acknowledges it as an AckCommand does.
		if dropUpdate(t, u.UUID) {
			touched[t] = true
		}
	}
	for t := range touched {
		a.tasks.persistLocked(t)
	}
}

// poison reports errors that refuse a whole request for its content: some
// update in it can never be taken.
func poison(err error) bool {
	return errors.Is(err, protocol.ErrInvalidArgument) || errors.Is(err, protocol.ErrMalformed) ||
		errors.Is(err, protocol.ErrTooLarge)
}

// isolate handles a request refused whole for its content. The tasks of a
// request with several are sent one per request from now on, to find the
// culprit; a task sent alone loses its oldest update, so that one bad
// update cannot hold back the task's others forever.
func (a *Agent) isolate(b *batch, err error) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	if len(b.tasks) > 1 {
		a.log.Warn("status update request refused; sending its tasks one by one", "tasks", len(b.tasks), "error", err)
		for _, t := range b.tasks {
			t.solo, t.lastSent = true, time.Time{}
		}
		a.kick()
		return
	}
	t := b.tasks[0]
	if len(t.rec.Queue) > 0 && t.rec.Queue[0].UUID == b.updates[0].UUID {
		t.log.Error("status update refused by the master; dropped", "uuid", b.updates[0].UUID,
			"state", b.updates[0].Status.State, "error", err)
		dropUpdate(t, b.updates[0].UUID)
		t.lastSent = time.Time{}
		a.tasks.persistLocked(t)
		a.kick()
	}
}
