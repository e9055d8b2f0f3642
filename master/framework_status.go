package master

import (
	"context"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// sendStatus reports a task status to the cluster's event stream and
// forwards it to its framework. A status the framework must acknowledge
// goes out only once those before it are acknowledged: while its task has
// an older one pending, that one is sent instead (again), and the
// acknowledgement sends the next (sendPending). A status that needs no
// acknowledgement (reconciliation, a launch refused before its task
// existed) goes out as it is.
func (l *leader) sendStatus(st protocol.TaskStatus) {
	l.taskEvent(st)
	if st.UUID != "" {
		if t, ok := l.view().Task(st.FrameworkID, st.TaskID); ok {
			l.sendPending(t)
			return
		}
	}
	l.publishStatus(st)
}

// sendPending sends the oldest status of t its framework has not
// acknowledged, if any.
func (l *leader) sendPending(t *state.Task) {
	if st, ok := t.Pending(); ok {
		l.publishStatus(st)
	}
}

// publishStatus sends a framework a status update event.
func (l *leader) publishStatus(st protocol.TaskStatus) {
	l.publishFramework(st.FrameworkID, protocol.MsgStatusUpdateEvent, protocol.StatusUpdateEvent{Status: st, UUID: st.UUID})
}

// reconcile sends the latest known status of the named tasks (explicit),
// or of all the framework's tasks (implicit, no tasks named). A task the
// master does not know is reported LOST, as Mesos does.
func (l *leader) reconcile(r *protocol.ReconcileRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	v := l.view()
	if len(r.Tasks) == 0 {
		for _, t := range v.TasksByFramework(r.FrameworkID) {
			l.sendStatus(reconciled(t.Status))
		}
		return nil
	}
	for _, rt := range r.Tasks {
		t, ok := v.Task(r.FrameworkID, rt.TaskID)
		if !ok {
			l.sendStatus(protocol.TaskStatus{TaskID: rt.TaskID, FrameworkID: r.FrameworkID, AgentID: rt.AgentID,
				State: protocol.TaskLost, Reason: protocol.ReasonTaskUnknown, Message: "task unknown to the master",
				Timestamp: time.Now().UnixNano()})
			continue
		}
		l.sendStatus(reconciled(t.Status))
	}
	return nil
}

// reconciled is a task's latest status as reconciliation reports it: with
// ReasonReconciliation, as Mesos does, and no update UUID (nothing to
// acknowledge).
func reconciled(st protocol.TaskStatus) protocol.TaskStatus {
	st.UUID = ""
	st.Reason = protocol.ReasonReconciliation
	return st
}

// acknowledge records that a framework received status updates; the
// reply lists the stale or unknown ones.
func (l *leader) acknowledge(ctx context.Context, r *protocol.AcknowledgeRequest) (*protocol.AcknowledgeReply, error) {
	if err := l.admit(r.FrameworkID); err != nil {
		return nil, err
	}
	c := state.AcknowledgeStatus{FrameworkID: r.FrameworkID, Acks: make([]state.StatusAck, len(r.Acks))}
	for i, a := range r.Acks {
		c.Acks[i] = state.StatusAck{TaskID: a.TaskID, UUID: a.UUID}
	}
	res, err := l.apply(ctx, state.CmdAcknowledgeStatus, c)
	if err != nil {
		return nil, err
	}
	reply := &protocol.AcknowledgeReply{}
	v := l.view()
	for i, o := range res.(state.AckResult) {
		switch {
		case o.Err != nil:
			reply.Refused = append(reply.Refused, protocol.Refusal{TaskID: r.Acks[i].TaskID, UUID: r.Acks[i].UUID, Error: protocol.ToWire(o.Err)})
		case !o.Removed:
			// The next status of the task, now that this one is through.
			if t, ok := v.Task(r.FrameworkID, r.Acks[i].TaskID); ok {
				l.sendPending(t)
			}
		}
	}
	return reply, nil
}
