package master

import (
	"errors"
	"time"

	"github.com/allot-project/allot/protocol"
)

// refuseLaunch tells a framework that the tasks of an accept it sent will
// never run: each gets TASK_ERROR with the reason, as Mesos does, besides
// the error reply, so a scheduler that tracks tasks by status sees them
// end. Tasks the master already holds under the same IDs (a repeated
// accept) are left alone, and so is a framework the master does not know.
func (l *leader) refuseLaunch(r *protocol.AcceptRequest, cause error) {
	if !protocol.ValidID(string(r.FrameworkID)) {
		return
	}
	view := l.m.View()
	if _, ok := view.Framework(r.FrameworkID); !ok {
		return
	}
	reason := protocol.ReasonInvalidOffers
	if errors.Is(cause, protocol.ErrInvalidArgument) || errors.Is(cause, protocol.ErrInvalidResources) ||
		errors.Is(cause, protocol.ErrInvalidConstraint) || errors.Is(cause, protocol.ErrNotPreemptible) {
		reason = protocol.ReasonTaskInvalid
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
				State: protocol.TaskError, Reason: reason, Message: msg, Timestamp: now})
		}
	}
}
