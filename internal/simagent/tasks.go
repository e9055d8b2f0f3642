package simagent

import (
	"reflect"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// onCommand handles the agent's commands. The leader may send the first
// ones (a launch on a fresh offer) before the register reply reached the
// agent, so until then every command is kept for register to sort out.
func (a *Agent) onCommand(msg *nats.Msg) {
	a.cmdMu.Lock()
	defer a.cmdMu.Unlock()
	if !a.knowSubj {
		a.early = append(a.early, msg)
		return
	}
	a.mu.Lock()
	mine := msg.Subject == a.cmdSubject
	a.mu.Unlock()
	if mine {
		a.handleCommand(msg)
	}
}

func (a *Agent) handleCommand(msg *nats.Msg) {
	env, err := protocol.Decode(msg.Data)
	if err != nil {
		a.logger.Error("bad command", "error", err)
		return
	}
	body, _ := protocol.NewBody(env.Type)
	if err := protocol.DecodeBody(env, body); err != nil {
		a.logger.Error("bad command body", "type", env.Type.String(), "error", err)
		return
	}
	if _, launch := body.(*protocol.LaunchCommand); launch && a.dropLaunch() {
		return
	}
	switch cmd := body.(type) {
	case *protocol.LaunchCommand:
		a.launch(cmd.FrameworkID, cmd.Tasks)
	case *protocol.LaunchGroupCommand:
		a.launch(cmd.FrameworkID, cmd.Tasks)
	case *protocol.KillCommand:
		a.mu.Lock()
		reason := protocol.ReasonKilledByFramework
		if cmd.Reason != "" {
			reason = cmd.Reason
		}
		a.endLocked(TaskKey{cmd.FrameworkID, cmd.TaskID}, protocol.TaskKilled, reason, "killed")
		a.mu.Unlock()
	case *protocol.ShutdownFrameworkCommand:
		a.mu.Lock()
		for _, k := range a.order {
			if k.FrameworkID == cmd.FrameworkID {
				a.endLocked(k, protocol.TaskKilled, protocol.ReasonFrameworkRemoved, "framework shut down")
			}
		}
		a.mu.Unlock()
	case *protocol.AckCommand:
		a.ack(cmd.Acks)
	default:
		a.logger.Debug("ignored command", "type", env.Type.String())
	}
	a.kick()
}

// dropLaunch reports whether to ignore this launch (Options.DropLaunches).
func (a *Agent) dropLaunch() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.opts.DropLaunches > 0 {
		a.opts.DropLaunches--
		a.logger.Info("launch dropped on purpose")
		return true
	}
	return false
}

func (a *Agent) launch(fw protocol.FrameworkID, tasks []protocol.TaskInfo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	for _, info := range tasks {
		k := TaskKey{fw, info.TaskID}
		if t, ok := a.tasks[k]; ok {
			// Delivered again (a new leader resends launches it cannot
			// know arrived): the task already runs, so it is not started.
			t.launches++
			if !reflect.DeepEqual(t.info, info) {
				t.conflicts++
			}
			a.logger.Info("launch delivered again, ignored", "task", k.String(), "launches", t.launches)
			continue
		}
		t := &agentTask{info: info, key: k, behaviour: behaviourOf(info, a.opts.Behaviour), launches: 1,
			state: protocol.TaskStaging}
		a.tasks[k] = t
		a.order = append(a.order, k)
		a.enqueueLocked(t, protocol.TaskStarting, "", "")
		a.enqueueLocked(t, protocol.TaskRunning, "", "")
		if a.held {
			t.held = true
		} else {
			a.startBehaviourLocked(t)
		}
	}
}

func (a *Agent) startBehaviourLocked(t *agentTask) {
	var end protocol.TaskState
	switch t.behaviour.Kind {
	case BehaviourFinish:
		end = protocol.TaskFinished
	case BehaviourFail:
		end = protocol.TaskFailed
	default:
		return
	}
	k := t.key
	t.timer = time.AfterFunc(t.behaviour.After, func() {
		a.mu.Lock()
		a.endLocked(k, end, "", "")
		a.mu.Unlock()
		a.kick()
	})
}

// endLocked moves a live task to a terminal state.
func (a *Agent) endLocked(k TaskKey, st protocol.TaskState, reason, msg string) bool {
	t, ok := a.tasks[k]
	if !ok || a.closed || t.state.Terminal() {
		return false
	}
	if t.timer != nil {
		t.timer.Stop()
	}
	t.held = false
	if st == protocol.TaskFailed && reason == "" {
		reason = protocol.ReasonCommandFailed
	}
	a.enqueueLocked(t, st, reason, msg)
	return true
}

// enqueueLocked creates a status update with a fresh UUID and queues it.
func (a *Agent) enqueueLocked(t *agentTask, st protocol.TaskState, reason, msg string) {
	uuid := protocol.StatusUUID(protocol.NewID(protocol.PrefixStatus))
	var exit *int
	switch st {
	case protocol.TaskFinished:
		exit = new(int)
	case protocol.TaskFailed:
		code := 1
		exit = &code
	}
	u := protocol.StatusUpdate{UUID: uuid, Status: protocol.TaskStatus{
		TaskID: t.key.TaskID, FrameworkID: t.key.FrameworkID, AgentID: a.id, State: st,
		Reason: reason, Message: msg, ExitCode: exit, Timestamp: time.Now().UnixNano(), UUID: uuid,
	}}
	t.state = st
	t.sent = append(t.sent, u)
	t.queue = append(t.queue, u)
	if !t.listed {
		t.listed = true
		a.pending = append(a.pending, t.key)
	}
	a.kick() // the send loop sleeps while nothing is queued
}
