package executor

import (
	"context"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// onCommand handles one message on the agent's command subject. A
// malformed or unexpected message is logged and dropped.
func (a *Agent) onCommand(ctx context.Context, m *nats.Msg) {
	if !a.currentTerm(m) {
		return
	}
	env, err := protocol.Decode(m.Data)
	if err != nil {
		a.log.Warn("malformed command dropped", "bytes", len(m.Data), "error", err)
		return
	}
	body, ok := protocol.NewBody(env.Type)
	if !ok {
		a.log.Warn("command of unknown type dropped", "type", env.Type.String())
		return
	}
	if err := protocol.DecodeBody(env, body); err != nil {
		a.log.Warn("malformed command dropped", "type", env.Type.String(), "error", err)
		return
	}
	switch cmd := body.(type) {
	case *protocol.LaunchCommand:
		a.gc.frameworkLaunched(cmd.FrameworkID)
		a.launch(ctx, cmd.FrameworkID, "", cmd.Tasks)
	case *protocol.LaunchGroupCommand:
		if !protocol.ValidID(cmd.GroupID) {
			a.log.Warn("launch group without a valid group id dropped", "framework_id", cmd.FrameworkID, "tasks", len(cmd.Tasks))
			return
		}
		a.gc.frameworkLaunched(cmd.FrameworkID)
		a.launch(ctx, cmd.FrameworkID, cmd.GroupID, cmd.Tasks)
	case *protocol.KillCommand:
		if err := cmd.Validate(); err != nil {
			a.log.Warn("invalid kill command dropped", "error", err)
			return
		}
		reason := protocol.ReasonKilledByFramework
		if cmd.Reason != "" {
			reason = cmd.Reason // preempted, revoked, drained or the operator's
		}
		a.kill(cmd.FrameworkID, cmd.TaskID, reason, cmd.GracePeriod)
	case *protocol.ShutdownFrameworkCommand:
		if !protocol.ValidID(string(cmd.FrameworkID)) {
			a.log.Warn("invalid shutdown framework command dropped", "framework_id", cmd.FrameworkID)
			return
		}
		a.shutdownFramework(cmd.FrameworkID)
	case *protocol.AckCommand:
		a.ack(cmd.Acks)
	case *protocol.CoflowPrioritiesCommand:
		a.applyCoflowPriorities(cmd)
	default:
		a.log.Warn("unexpected message on the command subject dropped", "type", env.Type.String())
	}
}

// currentTerm reports whether a command comes from the leader of the
// newest term the agent has seen (protocol.TermHeader), and remembers a
// newer term. A command without a term, or from an older one, is dropped:
// only masters may publish here, and a master that lost its leadership
// without noticing yet must not act on the agent any more; the leader of
// the current term sends again whatever its predecessor left undone.
func (a *Agent) currentTerm(m *nats.Msg) bool {
	term, err := strconv.ParseUint(m.Header.Get(protocol.TermHeader), 10, 64)
	a.mu.Lock()
	current := a.term
	ok := err == nil && term >= current
	if ok {
		a.term = term
	}
	a.mu.Unlock()
	if !ok {
		a.log.Warn("command from an old or unknown leader term dropped", "term", m.Header.Get(protocol.TermHeader),
			"current_term", current, "bytes", len(m.Data))
	}
	return ok
}

// kill kills a task: KILLING now, then KILLED with reason once its process
// ended. A task still launching is not started. A kill of a task the agent
// does not have is answered with LOST (task_unknown), so that a launch the
// master committed but that never arrived does not stay STAGING; the task
// is remembered, so that a late launch of it is not started.
func (a *Agent) kill(fw protocol.FrameworkID, id protocol.TaskID, reason string, grace time.Duration) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	k := taskKey{fw, id}
	t, ok := a.tasks.live[k]
	if !ok {
		if _, ended := a.tasks.ended[k]; ended {
			a.log.Debug("kill of an ended task ignored", "task", k.String())
			return
		}
		a.log.Info("kill of an unknown task; reporting it lost", "task", k.String())
		t = a.newTaskLocked(fw, protocol.TaskInfo{TaskID: id, AgentID: a.ID()})
		t.rec.Unknown = true
		a.enqueueLocked(t, protocol.TaskLost, protocol.ReasonTaskUnknown, "kill of a task unknown to the agent", nil)
		return
	}
	a.killLocked(t, reason, grace)
}

// killLocked requests t's kill once, and signals its process (again).
// grace, when not 0, replaces the task's own grace period.
func (a *Agent) killLocked(t *task, reason string, grace time.Duration) {
	if t.rec.State.Terminal() || t.abandoned {
		return
	}
	if !t.rec.KillRequested {
		t.rec.KillRequested, t.rec.KillReason = true, reason
		a.enqueueLocked(t, protocol.TaskKilling, reason, "", nil)
	}
	if grace > 0 {
		t.killGrace = grace
	}
	if t.rt != nil {
		if err := t.rt.KillWithGrace(t.killGrace); err != nil {
			t.log.Warn("kill task", "error", err)
		}
	}
}

// shutdownFramework kills every task of a framework, and records it gone
// for the sandbox collector, which may then remove its ended sandboxes
// early when the disk is short; a framework with nothing running here is
// recorded all the same, as the leader tells every agent that holds its
// sandboxes.
func (a *Agent) shutdownFramework(fw protocol.FrameworkID) {
	a.gc.frameworkGone(fw)
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	n := 0
	for _, t := range a.tasks.live {
		if t.rec.FrameworkID == fw && !t.rec.State.Terminal() {
			a.killLocked(t, protocol.ReasonFrameworkRemoved, 0)
			n++
		}
	}
	if n == 0 {
		// A new leader sends again the shutdowns of the removed frameworks
		// it remembers; most find nothing left.
		a.log.Debug("framework shut down: nothing of it runs here", "framework_id", fw)
		return
	}
	a.log.Info("framework shut down", "framework_id", fw, "tasks", n)
}
