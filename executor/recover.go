package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// recoverTasks takes over the checkpointed tasks (recs, as the journal
// held them) and finds each one that had not ended again:
//
//   - still running: watched again (RUNNING is reported if the agent
//     stopped before reporting it); its end is reported once, later;
//   - ended while the agent was down: its end is reported now, from the
//     exit its shim recorded;
//   - shim gone without recording an exit: FAILED, executor_terminated
//     (the runner kills what is left of the task);
//   - never started (the agent stopped during its launch): DROPPED,
//     agent_restarted, or KILLED if a kill had been requested; so are
//     the members of a group whose launch the stop cut short.
//
// A task whose record is terminal already had its final status queued: it
// is only sent again until acknowledged, never queued a second time.
func (a *Agent) recoverTasks(ctx context.Context, recs []taskRecord) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	var starting []*task // running, but RUNNING was never reported
	failedGroups := map[groupKey]bool{}
	for _, rec := range recs {
		t := &task{rec: rec, log: a.log.With("framework_id", rec.FrameworkID, "task_id", rec.Info.TaskID)}
		k := t.key()
		if other, dup := a.tasks.live[k]; dup {
			t.log.Error("two records for one task; dropping one", "kept", other.rec.Name, "dropped", rec.Name)
			a.tasks.queueLocked(nil, removeEntry(rec.Name))
			continue
		}
		a.tasks.live[k] = t
		t.admitted = !rec.Unknown
		if rec.State.Terminal() {
			if len(rec.Queue) == 0 {
				a.tasks.persistLocked(t) // acknowledged before a crash cut its removal
			}
			continue
		}
		if rec.Unknown {
			continue
		}
		switch alive := a.reattachLocked(ctx, t); {
		case alive && launching(rec.State):
			starting = append(starting, t)
		case !alive && launching(rec.State) && rec.Info.GroupID != "":
			failedGroups[groupKey{rec.FrameworkID, rec.Info.GroupID}] = true
		}
	}
	// A group whose launch the agent's stop interrupted runs all or
	// nothing too.
	for _, t := range starting {
		switch {
		case failedGroups[groupKey{t.rec.FrameworkID, t.rec.Info.GroupID}]:
			t.launchCut = true
			if err := t.rt.Kill(); err != nil {
				t.log.Warn("kill task", "error", err)
			}
		case !t.rec.KillRequested:
			a.enqueueLocked(t, protocol.TaskRunning, "", "", nil)
		}
	}
	if len(recs) > 0 {
		a.log.Info("checkpoint recovered", "tasks", len(a.tasks.live))
	}
}

// launching reports whether a task in state s had not been reported
// started.
func launching(s protocol.TaskState) bool {
	return s == protocol.TaskStaging || s == protocol.TaskStarting
}

// groupKey names a task group.
type groupKey struct {
	fw    protocol.FrameworkID
	group string
}

// reattachLocked finds a non-terminal task's process again, reports the
// end of one that is gone, and reports whether it still runs.
func (a *Agent) reattachLocked(ctx context.Context, t *task) bool {
	rt, err := a.runner.Reattach(ctx, t.rec.Name)
	switch {
	case err != nil && ctx.Err() != nil:
		return false // stopping: the next start looks again
	case errors.Is(err, runner.ErrNotFound) && t.rec.KillRequested:
		a.enqueueLocked(t, protocol.TaskKilled, protocol.ReasonKilledDuringLaunch, "killed before it started", nil)
		return false
	case err != nil && launching(t.rec.State):
		// Never started: DROPPED, which a framework may simply launch
		// again (the master reports LOST to one that is not partition
		// aware), never FAILED, which says the task ran and failed.
		msg := "the agent restarted before the task started"
		if !errors.Is(err, runner.ErrNotFound) {
			msg = fmt.Sprintf("%s (%v)", msg, err)
		}
		a.enqueueLocked(t, protocol.TaskDropped, protocol.ReasonAgentRestarted, msg, nil)
		return false
	case err != nil:
		a.enqueueLocked(t, protocol.TaskFailed, protocol.ReasonExecutorTerminated,
			fmt.Sprintf("the agent restarted and found no trace of the running task: %v", err), nil)
		return false
	}
	t.rt = rt
	if e, done := rt.Exit(); done {
		t.log.Info("task ended while the agent was down")
		a.exitedLocked(t, e)
		return false
	}
	t.log.Info("task reattached", "pid", rt.Pid())
	if t.rec.KillRequested {
		if err := rt.Kill(); err != nil {
			t.log.Warn("kill task", "error", err)
		}
	}
	a.watchLocked(ctx, t)
	a.startHealthLocked(ctx, t)
	return true
}
