package framework

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/allot-project/allot/protocol"
)

// PreemptionHandler is an optional interface of a Scheduler: a scheduler
// that implements it is told when the master means to take some of its
// tasks back. Schedulers that do not implement it lose the tasks all the
// same, and learn of it from their KILLED statuses, whose Reason says why
// (protocol.ReasonPreempted, ReasonRevoked, ReasonAgentDrained,
// ReasonKilledByOperator).
//
// The driver checks for it by type assertion on the Scheduler given to
// NewDriver, so a scheduler that embeds another (NopScheduler, a
// dag.Scheduler) gets the embedded one's method unless it overrides it.
type PreemptionHandler interface {
	// Preempting delivers a preemption warning. Without ev.Withdrawn, the
	// master will kill ev.Tasks (each with the Reason its KILLED status
	// will carry) once ev.Deadline (Unix nanoseconds) has passed, unless
	// the need for them passes first. Before then the scheduler may
	// checkpoint them, or kill other tasks of the same size on the same
	// agents instead (Driver.Kill), after which the master withdraws the
	// warning. With ev.Withdrawn the tasks named may run on.
	//
	// It is called like the Scheduler's callbacks: on the goroutine
	// running Driver.Run, one at a time, in the order the events arrived.
	// Warnings, like every event, reach the framework at most once, and a
	// new leader forgets its predecessor's: it warns again, with its own
	// deadline, if it still needs the tasks.
	Preempting(d *Driver, ev protocol.PreemptionEvent)
}

// Warning is a task the master warned it will kill (Driver.Warned).
type Warning struct {
	// Task is the task as the warning named it: its agent, resources
	// and the reason its kill will carry.
	Task protocol.PreemptedTask
	// Deadline is when the master kills it.
	Deadline time.Time
}

// warnings remembers the warnings in force: given by the current leader,
// neither withdrawn nor ended by the task's terminal status. It has its own
// lock, so reading it never waits for the driver.
type warnings struct {
	mu     sync.Mutex
	byTask map[protocol.TaskID]Warning
}

// apply records a warning, or forgets the tasks of a withdrawal.
func (w *warnings) apply(ev protocol.PreemptionEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byTask == nil {
		w.byTask = map[protocol.TaskID]Warning{}
	}
	for _, t := range ev.Tasks {
		if ev.Withdrawn {
			delete(w.byTask, t.TaskID)
			continue
		}
		t.Resources = t.Resources.Clone()
		w.byTask[t.TaskID] = Warning{Task: t, Deadline: time.Unix(0, ev.Deadline)}
	}
}

// forget drops the warning of a task that ended.
func (w *warnings) forget(id protocol.TaskID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byTask, id)
}

// reset forgets every warning: the leader that gave them is gone.
func (w *warnings) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	clear(w.byTask)
}

// list returns the warnings ordered by task ID.
func (w *warnings) list() []Warning {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Warning, 0, len(w.byTask))
	for _, x := range w.byTask {
		x.Task.Resources = x.Task.Resources.Clone()
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b Warning) int { return strings.Compare(string(a.Task.TaskID), string(b.Task.TaskID)) })
	return out
}

// Warned returns the preemption warnings in force, ordered by task ID:
// tasks the current leader said it will kill, whose warning it has not
// withdrawn and whose terminal status has not arrived. A leader change
// clears them (the new leader warns again if it still needs the tasks).
func (d *Driver) Warned() []Warning { return d.warned.list() }

// onPreemption records a warning or a withdrawal, tells the gangs, and
// calls the scheduler's Preempting when it has one.
func (d *Driver) onPreemption(ev protocol.PreemptionEvent) {
	if len(ev.Tasks) == 0 {
		return
	}
	d.warned.apply(ev)
	d.logger.Info("preemption warning", "tasks", len(ev.Tasks), "withdrawn", ev.Withdrawn,
		"deadline", time.Unix(0, ev.Deadline), "reason", ev.Tasks[0].Reason)
	d.mu.Lock()
	gangs := d.gangList()
	d.mu.Unlock()
	if !ev.Withdrawn {
		for _, g := range gangs {
			g.warned(ev)
		}
	}
	if h, ok := d.sched.(PreemptionHandler); ok {
		h.Preempting(d, ev)
	}
}
