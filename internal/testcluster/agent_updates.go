package testcluster

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// This file holds the reliable status-update machinery of TestAgent (send,
// resend, acknowledgement) and its heartbeats and re-registration.

// ack drops the acknowledged update from the head of its task's queue.
func (a *TestAgent) ack(k TaskKey, uuid protocol.StatusUUID) {
	a.mu.Lock()
	defer a.mu.Unlock()
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
			t.lastSent, t.committed = time.Time{}, false
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

// sendLoop sends the head update of every task that has one and is not
// waiting for an answer, when it is new or its resend interval passed.
func (a *TestAgent) sendLoop(ctx context.Context) {
	defer a.wg.Done()
	tick := time.NewTicker(a.opts.ResendInterval / 2)
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

func (a *TestAgent) flush(ctx context.Context, now time.Time) {
	a.mu.Lock()
	if a.reregister {
		a.mu.Unlock()
		return
	}
	var out []protocol.StatusUpdate
	var keys []TaskKey
	for _, k := range a.order {
		t := a.tasks[k]
		if len(t.queue) == 0 || t.inflight || t.committed || !t.lastSent.IsZero() && now.Sub(t.lastSent) < a.opts.ResendInterval {
			continue
		}
		t.inflight, t.lastSent = true, now
		out = append(out, t.queue[0])
		keys = append(keys, k)
	}
	id := a.id
	a.mu.Unlock()
	for i := range out {
		a.wg.Add(1)
		go a.sendUpdate(ctx, id, keys[i], out[i])
	}
}

func (a *TestAgent) sendUpdate(ctx context.Context, id protocol.AgentID, k TaskKey, u protocol.StatusUpdate) {
	defer a.wg.Done()
	u.Status.AgentID = id
	err := a.req.once(ctx, a.subj.APIAgent(protocol.VerbStatus), protocol.MsgStatusUpdateRequest,
		protocol.StatusUpdateRequest{AgentID: id, Update: u}, nil)
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tasks[k]
	t.inflight = false
	switch {
	case err == nil:
		// Committed: the AckCommand (published before the reply) pops it.
		if len(t.queue) > 0 && t.queue[0].UUID == u.UUID {
			t.committed = true
		}
	case retryable(err), errors.Is(err, context.Canceled):
		// Resent after ResendInterval.
	case errors.Is(err, protocol.ErrUnknownAgent):
		a.wantReregisterLocked()
	case len(t.queue) == 0 || t.queue[0].UUID != u.UUID:
		// Refused, but acknowledged already: the master has no use for it
		// (e.g. its framework was removed) and said so with an AckCommand.
		a.logger.Debug("status update refused after its acknowledgement", "task", k.String(),
			"uuid", u.UUID, "error", err)
	default:
		// The master will never take this update (e.g. the task is already
		// terminal there, or gone): keeping it would resend it forever. A
		// late AckCommand takes it off the refused list.
		a.logger.Warn("status update refused", "task", k.String(), "uuid", u.UUID,
			"state", u.Status.State, "error", err)
		a.refused = append(a.refused, RefusedUpdate{Update: u, Err: err})
		t.queue = t.queue[1:]
		t.lastSent, t.committed = time.Time{}, false
	}
}

func (a *TestAgent) heartbeatLoop(ctx context.Context) {
	defer a.wg.Done()
	a.mu.Lock()
	every := a.heartbeat
	a.mu.Unlock()
	if every <= 0 {
		every = DefaultAgentHeartbeat
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		a.mu.Lock()
		id, rereg := a.id, a.reregister
		a.mu.Unlock()
		if rereg {
			a.doReregister(ctx)
			continue
		}
		err := a.req.once(ctx, a.subj.APIAgent(protocol.VerbHeartbeat), protocol.MsgHeartbeatRequest,
			protocol.HeartbeatRequest{AgentID: id}, nil)
		if errors.Is(err, protocol.ErrUnknownAgent) {
			a.mu.Lock()
			a.wantReregisterLocked()
			a.mu.Unlock()
			a.doReregister(ctx)
		} else if err != nil && !retryable(err) && ctx.Err() == nil {
			a.logger.Warn("heartbeat", "error", err)
		}
	}
}

func (a *TestAgent) wantReregisterLocked() {
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
func (a *TestAgent) doReregister(ctx context.Context) {
	a.mu.Lock()
	req := protocol.ReregisterRequest{AgentID: a.id, Hostname: a.opts.Hostname,
		Resources: a.opts.Resources, Attributes: a.opts.Attributes, Version: "testcluster"}
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
	err := a.req.retry(rctx, a.subj.APIAgent(protocol.VerbReregister), protocol.MsgReregisterRequest, req, &reply)
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
