package simagent

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// This file holds the reliable status-update machinery of Agent (send,
// resend, acknowledgement) and its heartbeats and re-registration.

// ack drops acknowledged updates from their tasks' queues.
func (a *Agent) ack(acks []protocol.StatusAck) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ack := range acks {
		a.ackLocked(TaskKey{ack.FrameworkID, ack.TaskID}, ack.UUID)
	}
}

func (a *Agent) ackLocked(k TaskKey, uuid protocol.StatusUUID) {
	t, ok := a.tasks[k]
	if !ok {
		return
	}
	for i, u := range t.queue {
		if u.UUID == uuid {
			if i != 0 {
				a.logger.Warn("ack out of order", "task", k.String(), "uuid", uuid, "position", i)
			}
			t.queue = append(t.queue[:i:i], t.queue[i+1:]...)
			t.acked = append(t.acked, uuid)
			if len(t.queue) == 0 {
				t.lastSent = time.Time{}
			}
			return
		}
	}
	// An update dropped as refused whose acknowledgement was only late: the
	// master did take it.
	a.refused = slices.DeleteFunc(a.refused, func(r RefusedUpdate) bool {
		if r.Update.UUID == uuid && r.Update.Status.TaskID == k.TaskID {
			t.acked = append(t.acked, uuid)
			return true
		}
		return false
	})
}

// sendLoop sends the queued updates of every task that has some and is not
// waiting for an answer, when they are new or their resend interval passed.
//
// It wakes on a new update (kick) and, while updates wait for their
// acknowledgement, every half ResendInterval; an agent with nothing to
// send sleeps. Ten thousand agents ticking every 50 ms regardless were
// 200,000 wakes a second in the load generator's agents' process.
func (a *Agent) sendLoop(ctx context.Context) {
	defer a.wg.Done()
	resend := time.NewTimer(a.opts.ResendInterval / 2)
	defer resend.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-resend.C:
		case <-a.wake:
		}
		if a.flush(ctx, time.Now()) {
			resend.Reset(a.opts.ResendInterval / 2)
		} else {
			resend.Stop()
		}
	}
}

// updateBatch is one status update request: the queue of each task in it, in order, so a task's updates apply in the order created.
type updateBatch struct {
	keys    []TaskKey
	updates []protocol.StatusUpdate
}

// flush sends the updates due and reports whether any still wait for
// their acknowledgement.
func (a *Agent) flush(ctx context.Context, now time.Time) bool {
	a.mu.Lock()
	if a.reregister {
		waiting := len(a.pending) > 0
		a.mu.Unlock()
		return waiting
	}
	var batches []*updateBatch
	cur := &updateBatch{}
	live := a.pending[:0]
	for _, k := range a.pending {
		t := a.tasks[k]
		if len(t.queue) == 0 {
			t.listed = false
			continue
		}
		live = append(live, k)
		if t.inflight || !t.lastSent.IsZero() && now.Sub(t.lastSent) < a.opts.ResendInterval {
			continue
		}
		ups := t.queue
		if len(cur.updates)+len(ups) > protocol.MaxStatusBatch {
			batches, cur = append(batches, cur), &updateBatch{}
		}
		t.inflight, t.lastSent = true, now
		cur.keys = append(cur.keys, k)
		cur.updates = append(cur.updates, ups...)
	}
	a.pending = live
	if len(cur.updates) > 0 {
		batches = append(batches, cur)
	}
	id, waiting := a.id, len(live) > 0
	a.mu.Unlock()
	for _, b := range batches {
		a.wg.Add(1)
		go a.sendBatch(ctx, id, b)
	}
	return waiting
}

func (a *Agent) sendBatch(ctx context.Context, id protocol.AgentID, b *updateBatch) {
	defer a.wg.Done()
	for i := range b.updates {
		b.updates[i].Status.AgentID = id
	}
	var reply protocol.StatusUpdateReply
	err := a.req.Once(ctx, a.subject(protocol.VerbStatus, id), protocol.MsgStatusUpdateRequest,
		protocol.StatusUpdateRequest{AgentID: id, Updates: b.updates}, &reply)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range b.keys {
		a.tasks[k].inflight = false
	}
	switch {
	case err == nil:
	case Retryable(err), errors.Is(err, context.Canceled):
		return // resent after ResendInterval
	case errors.Is(err, protocol.ErrUnknownAgent):
		a.wantReregisterLocked()
		return
	default:
		a.logger.Warn("status update request refused whole", "updates", len(b.updates), "error", err)
		return
	}
	refused := make(map[protocol.StatusUUID]error, len(reply.Refused))
	for _, r := range reply.Refused {
		refused[r.UUID] = r.Err()
	}
	for _, u := range b.updates {
		k := TaskKey{u.Status.FrameworkID, u.Status.TaskID}
		t := a.tasks[k]
		err, bad := refused[u.UUID]
		if !bad {
			// In Raft: the reply acknowledges it as its AckCommand does.
			a.ackLocked(k, u.UUID)
			continue
		}
		i := slices.IndexFunc(t.queue, func(q protocol.StatusUpdate) bool { return q.UUID == u.UUID })
		if i < 0 {
			// Refused, but acknowledged already: the master has no use for
			// it (e.g. its framework was removed) and said so with an
			// AckCommand.
			a.logger.Debug("status update refused after its acknowledgement", "task", k.String(), "uuid", u.UUID, "error", err)
			continue
		}
		// The master will never take this update (e.g. the task is already
		// terminal there, or gone): keeping it would resend it forever. A
		// late AckCommand takes it off the refused list.
		a.logger.Warn("status update refused", "task", k.String(), "uuid", u.UUID, "state", u.Status.State, "error", err)
		a.refused = append(a.refused, RefusedUpdate{Update: u, Err: err})
		t.queue = append(t.queue[:i:i], t.queue[i+1:]...)
	}
}

func (a *Agent) heartbeatLoop(ctx context.Context) {
	defer a.wg.Done()
	a.mu.Lock()
	every := a.heartbeat
	a.mu.Unlock()
	if every <= 0 {
		every = defaultHeartbeat
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	// Back on a server after an outage (its master killed, say), the agent
	// heartbeats at once, as the real agent contacts the leader at once
	// (it reregisters): the leader has not heard it for the outage, and
	// the next tick could be an interval away.
	reconnected := a.nc.StatusChanged(nats.CONNECTED)
	defer a.nc.RemoveStatusListener(reconnected)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.beat:
		case <-reconnected:
		}
		a.mu.Lock()
		id, rereg := a.id, a.reregister
		a.mu.Unlock()
		if rereg {
			a.doReregister(ctx)
			continue
		}
		var reply protocol.HeartbeatReply
		err := a.req.Once(ctx, a.subject(protocol.VerbHeartbeat, id), protocol.MsgHeartbeatRequest,
			protocol.HeartbeatRequest{AgentID: id}, &reply)
		if d := reply.HeartbeatInterval; err == nil && d > 0 && d != every {
			// The leader paces heartbeats by the number of agents.
			every = d
			tick.Reset(every)
		}
		if a.opts.OnHeartbeat != nil {
			a.opts.OnHeartbeat(err)
		}
		switch {
		case errors.Is(err, protocol.ErrUnknownAgent):
			a.mu.Lock()
			a.wantReregisterLocked()
			a.mu.Unlock()
			a.doReregister(ctx)
		case err == nil || ctx.Err() != nil:
		case natsclient.Unanswered(err):
			// As the real agent does: its pings are too rare to find a
			// server that stopped answering in time.
			if moved, _ := natsclient.MoveOnIfStalled(a.nc, a.opts.StallCheck); moved {
				a.logger.Warn("NATS server does not answer; reconnecting through another")
			}
		case !Retryable(err):
			a.logger.Warn("heartbeat", "error", err)
		}
	}
}

func (a *Agent) wantReregisterLocked() {
	if !a.reregister {
		a.logger.Info("leader does not know this agent; reregistering")
	}
	a.reregister = true
}

// doReregister re-attaches the agent with its tasks. Each task is reported
// with the status of its oldest unacknowledged update (or its latest, when
// all are acknowledged), so the master never skips ahead of the updates
// still queued; tasks that ended and whose updates were all acknowledged
// are left out.
func (a *Agent) doReregister(ctx context.Context) {
	a.mu.Lock()
	req := protocol.ReregisterRequest{AgentID: a.id, Hostname: a.opts.Hostname,
		Resources: a.opts.Resources, Attributes: a.opts.Attributes, Version: a.opts.Version}
	for _, k := range a.order {
		t := a.tasks[k]
		switch {
		case len(t.queue) > 0:
			req.Tasks = append(req.Tasks, t.queue[0].Status)
			req.Unacked = append(req.Unacked, t.queue...)
		case !t.state.Terminal() && len(t.sent) > 0:
			req.Tasks = append(req.Tasks, t.sent[len(t.sent)-1].Status)
		}
	}
	a.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, a.opts.RegisterTimeout)
	defer cancel()
	var reply protocol.RegisterReply
	err := a.req.Retry(rctx, a.subject(protocol.VerbReregister, req.AgentID), protocol.MsgReregisterRequest, req, &reply)
	if err != nil {
		if ctx.Err() == nil {
			a.logger.Error("reregister", "error", err)
		}
		return
	}
	a.mu.Lock()
	a.reregister = false
	a.registrations++
	for _, t := range a.tasks {
		t.lastSent = time.Time{}
	}
	a.mu.Unlock()
	a.logger.Info("reregistered", "tasks", len(req.Tasks))
	a.kick()
}
