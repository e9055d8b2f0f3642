package master

import (
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// Kills the master decides on its own, not at a framework's request: an
// operator's kill, a drain's deadline, and preemption and revocation
// (docs/architecture.md, "Operator actions"). The master warns a framework
// first when it can (warnTasks, a PreemptionEvent naming the tasks and the
// deadline), then sends the agents the kills with the reason the tasks'
// KILLED statuses will carry (killForMaster). Both record cluster events,
// so operators see every step on GET /v1/events.

// warnTasks sends framework fw a PreemptionEvent (the tasks it will lose
// and when, or with ev.Withdrawn that it keeps them after all) and records
// a ClusterEventPreemption per task: PreemptionWarned, or
// PreemptionWithdrawn. An event without tasks sends nothing. Like every
// framework event it goes out at most once; a framework that missed it
// learns of the kill from the KILLED status, which it must acknowledge.
func (l *leader) warnTasks(fw protocol.FrameworkID, ev protocol.PreemptionEvent) {
	if len(ev.Tasks) == 0 {
		return
	}
	l.publishFramework(fw, protocol.MsgPreemptionEvent, ev)
	st := protocol.PreemptionWarned
	if ev.Withdrawn {
		st = protocol.PreemptionWithdrawn
	}
	for _, t := range ev.Tasks {
		l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventPreemption,
			Preemption: &protocol.PreemptionChange{FrameworkID: fw, TaskID: t.TaskID, AgentID: t.AgentID,
				Reason: t.Reason, State: st, Deadline: ev.Deadline}})
	}
}

// killForMaster sends t's agent a kill carrying reason (one of those
// protocol.MasterKillReason accepts; the agent puts it on the task's KILLED
// status) and grace (0: the task's own kill grace period). A kill for
// preemption, revocation or a drain's deadline is recorded as a
// ClusterEventPreemption in state PreemptionKilled; an operator's kill is
// recorded by its caller, as an operator action. Nothing is committed: the
// agent's KILLED status is, when it comes. Any goroutine may call it.
func (l *leader) killForMaster(t *state.Task, reason string, grace time.Duration) {
	if !protocol.MasterKillReason(reason) || grace < 0 {
		l.logger.Error("master kill with a reason agents refuse", "framework_id", t.FrameworkID,
			"task_id", t.ID, "reason", reason, "grace", grace)
		return
	}
	l.sendAgent(t.AgentID, protocol.MsgKillCommand, protocol.KillCommand{
		FrameworkID: t.FrameworkID, TaskID: t.ID, GracePeriod: grace, Reason: reason,
	})
	l.logger.Info("task killed by the master", "framework_id", t.FrameworkID, "task_id", t.ID,
		"agent_id", t.AgentID, "reason", reason)
	switch reason {
	case protocol.ReasonPreempted, protocol.ReasonRevoked, protocol.ReasonAgentDrained:
		l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventPreemption,
			Preemption: &protocol.PreemptionChange{FrameworkID: t.FrameworkID, TaskID: t.ID, AgentID: t.AgentID,
				Reason: reason, State: protocol.PreemptionKilled}})
	}
}

// operatorEvent records an operator's action on the cluster event stream.
func (l *leader) operatorEvent(a protocol.OperatorAction) {
	l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventOperator, Operator: &a})
}
