package master

import (
	"errors"
	"time"

	"github.com/allot-project/allot/protocol"
)

// refuseLaunch tells a framework that the tasks of an accept it sent will
// never run, besides the error reply, so a scheduler that tracks tasks by
// status sees them end. As in Mesos, tasks refused for their offers (gone,
// rescinded, made by a former leader) get TASK_DROPPED (TASK_LOST for a
// framework that is not partition aware), reason invalid_offers, since
// launching them again on new offers may well succeed; tasks refused for
// themselves (an invalid description, more than their offers hold) get
// TASK_ERROR, reason task_invalid, since the same launch would fail
// again. Tasks the master already holds under the same IDs (a repeated
// accept) are left alone, and so is a framework the master does not know.
func (l *leader) refuseLaunch(r *protocol.AcceptRequest, cause error) {
	if !protocol.ValidID(string(r.FrameworkID)) {
		return
	}
	view := l.view()
	if _, ok := view.Framework(r.FrameworkID); !ok {
		return
	}
	state, reason := view.StateFor(r.FrameworkID, protocol.TaskDropped), protocol.ReasonInvalidOffers
	if errors.Is(cause, protocol.ErrInvalidArgument) || errors.Is(cause, protocol.ErrInvalidResources) ||
		errors.Is(cause, protocol.ErrInvalidConstraint) || errors.Is(cause, protocol.ErrNotPreemptible) ||
		errors.Is(cause, protocol.ErrInsufficient) {
		state, reason = protocol.TaskError, protocol.ReasonTaskInvalid
	}
	msg := cause.Error()
	if len(msg) > protocol.MaxTextLen {
		msg = msg[:protocol.MaxTextLen]
	}
	now := time.Now().UnixNano()
	sent := map[protocol.TaskID]bool{}
	for _, op := range r.Operations {
		for _, t := range op.Tasks {
			if !protocol.ValidID(string(t.TaskID)) || sent[t.TaskID] {
				continue
			}
			if _, known := view.Task(r.FrameworkID, t.TaskID); known {
				continue
			}
			sent[t.TaskID] = true
			agent := t.AgentID
			if !protocol.ValidID(string(agent)) {
				agent = ""
			}
			l.sendStatus(protocol.TaskStatus{TaskID: t.TaskID, FrameworkID: r.FrameworkID, AgentID: agent,
				State: state, Reason: reason, Message: msg, Timestamp: now})
		}
	}
}
