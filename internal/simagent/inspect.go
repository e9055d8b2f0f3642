package simagent

import (
	"github.com/allot-project/allot/protocol"
)

// RefusedUpdate is a status update the master answered with an error that
// no retry can fix; the agent dropped it.
type RefusedUpdate struct {
	Update protocol.StatusUpdate
	Err    error
}

// AgentTask is a snapshot of one task as the agent saw it.
type AgentTask struct {
	Key  TaskKey
	Info protocol.TaskInfo
	// Launches counts the launch commands received for the task. A new
	// leader sends again launches it cannot know were delivered, so more
	// than one is allowed; the agent starts the task only once.
	Launches int
	// Conflicts counts launches that named the task with different task
	// info: a second, different launch under the same ID.
	Conflicts int
	State     protocol.TaskState
	// Sent are the status updates the agent created, in order.
	Sent []protocol.StatusUpdate
	// Acked are the UUIDs the master acknowledged.
	Acked []protocol.StatusUUID
	// Pending counts updates not acknowledged yet.
	Pending int
}

// ID is the agent ID the master assigned.
func (a *Agent) ID() protocol.AgentID {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.id
}

// Hostname is the agent's hostname.
func (a *Agent) Hostname() string { return a.opts.Hostname }

// Resources are the agent's total resources.
func (a *Agent) Resources() protocol.Resources { return a.opts.Resources.Clone() }

// Registrations counts successful registrations and re-registrations.
func (a *Agent) Registrations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registrations
}

// Refused returns the status updates the master refused for good.
func (a *Agent) Refused() []RefusedUpdate {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]RefusedUpdate(nil), a.refused...)
}

// Tasks returns a snapshot of every task the agent was asked to launch,
// in launch order.
func (a *Agent) Tasks() []AgentTask {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]AgentTask, 0, len(a.order))
	for _, k := range a.order {
		t := a.tasks[k]
		out = append(out, AgentTask{
			Key: k, Info: t.info, Launches: t.launches, Conflicts: t.conflicts, State: t.state,
			Sent:  append([]protocol.StatusUpdate(nil), t.sent...),
			Acked: append([]protocol.StatusUUID(nil), t.acked...), Pending: len(t.queue),
		})
	}
	return out
}

// Reregister makes the agent reregister now, as a restarted agent does.
// The heartbeat loop does it, woken at once: a second reregistration of
// its own, whose report was taken before a relaunched task started, would
// otherwise race this one and report the task gone.
func (a *Agent) Reregister() {
	a.mu.Lock()
	a.wantReregisterLocked()
	a.mu.Unlock()
	signal(a.beat)
}

// Pending counts status updates the master has not acknowledged yet.
func (a *Agent) Pending() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, t := range a.tasks {
		n += len(t.queue)
	}
	return n
}

// Hold makes tasks that reach RUNNING from now on wait for Release before
// their behaviour starts.
func (a *Agent) Hold() {
	a.mu.Lock()
	a.held = true
	a.mu.Unlock()
}

// Release starts the behaviour of every held task and stops holding.
func (a *Agent) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held = false
	for _, k := range a.order {
		if t := a.tasks[k]; t.held {
			t.held = false
			a.startBehaviourLocked(t)
		}
	}
}

// End ends a non-terminal task in a terminal state now, as if its process
// exited (FINISHED, FAILED) or was killed (KILLED). It reports whether the
// task existed and was not terminal.
func (a *Agent) End(key TaskKey, st protocol.TaskState) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.endLocked(key, st, "", "ended by the test")
}
