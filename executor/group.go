package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// launchGroup launches a task group all or nothing. Every task is
// admitted (valid, hard constraints, resources: the group's sum must fit),
// then every sandbox is prepared, then every task started; only then are
// they all RUNNING. If any step fails for one task, none runs: that task
// ends with its own reason (ERROR or FAILED), every other one with
// group_member_failed (ERROR when the group was refused at admission,
// FAILED later), and the tasks already started are killed. A kill of a
// member before the start aborts the group the same way. Once running,
// the tasks live and end independently.
func (a *Agent) launchGroup(ctx context.Context, fw protocol.FrameworkID, group string, infos []protocol.TaskInfo) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	var ts []*task
	for _, info := range infos {
		if info.GroupID == "" {
			info.GroupID = group // remembered in the checkpoint
		}
		if t, ok := a.newLaunchLocked(fw, info); ok {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return
	}
	log := a.log.With("framework_id", fw, "group_id", group)
	for i, t := range ts {
		st, reason, msg, ok := a.admitLocked(t)
		if !ok {
			// The members admitted so far never get a sandbox either.
			for _, prev := range ts[:i] {
				prev.admitted = false
			}
			log.Info("task group refused", "task_id", t.rec.Info.TaskID, "reason", reason)
			a.failGroupLocked(ts, i, st, reason, msg, protocol.TaskError)
			return
		}
		t.admitted = true
	}
	for _, t := range ts {
		a.enqueueLocked(t, protocol.TaskStarting, "", "", nil)
	}
	log.Debug("launching task group", "tasks", len(ts))
	a.wg.Add(1)
	go a.runGroup(ctx, ts)
}

// failGroupLocked ends every task of a group that did not start: the
// culprit with its own status, the others with group_member_failed in
// state others.
func (a *Agent) failGroupLocked(ts []*task, culprit int, st protocol.TaskState, reason, msg string, others protocol.TaskState) {
	id := ts[culprit].rec.Info.TaskID
	for i, t := range ts {
		if i == culprit {
			a.enqueueLocked(t, st, reason, msg, nil)
			continue
		}
		a.enqueueLocked(t, others, protocol.ReasonGroupMemberFailed,
			fmt.Sprintf("task %s of the group failed (%s): %s", id, reason, msg), nil)
	}
}

// runGroup prepares and starts an admitted group.
func (a *Agent) runGroup(ctx context.Context, ts []*task) {
	defer a.wg.Done()
	adv := a.advertised()
	a.tasks.mu.Lock()
	specs := make([]runner.Spec, len(ts))
	var version uint64
	for i, t := range ts {
		specs[i] = a.specLocked(t, adv)
		version = max(version, t.version)
	}
	a.tasks.mu.Unlock()
	if err := a.waitDurable(ctx, version); err != nil {
		return // stopping, as in runTask
	}

	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i := range ts {
		wg.Go(func() { _, errs[i] = a.runner.Prepare(ctx, specs[i]) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	if !a.checkGroup(ts, errs) {
		return
	}

	rts := make([]*runner.Task, 0, len(ts))
	var startErr error
	for i := range ts {
		rt, err := a.runner.Start(ctx, specs[i])
		if err != nil {
			startErr = err
			break
		}
		rts = append(rts, rt)
	}
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	switch {
	case startErr != nil && ctx.Err() != nil:
		// Stopping: kill what started, so the restarted agent finds none
		// of the group running (each then ends DROPPED, agent_restarted).
		for _, rt := range rts {
			_ = rt.Kill()
		}
	case startErr != nil:
		culprit := len(rts)
		for i, rt := range rts {
			ts[i].groupFailed = true
			a.startedLocked(ctx, ts[i], rt, false)
		}
		st, reason := launchFailure(startErr)
		a.failGroupLocked(ts[culprit:], 0, st, reason, startErr.Error(), protocol.TaskFailed)
	default:
		for i, rt := range rts {
			a.startedLocked(ctx, ts[i], rt, true)
		}
	}
}

// checkGroup ends the group if a preparation failed or a member was
// killed meanwhile, and reports whether the group may start.
func (a *Agent) checkGroup(ts []*task, errs []error) bool {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	for i, t := range ts {
		if t.abandoned {
			return false
		}
		if errs[i] != nil {
			st, reason := launchFailure(errs[i])
			a.failGroupLocked(ts, i, st, reason, errs[i].Error(), protocol.TaskFailed)
			return false
		}
	}
	for i, t := range ts {
		if t.rec.KillRequested {
			a.failGroupLocked(ts, i, protocol.TaskKilled, protocol.ReasonKilledDuringLaunch, "killed before the group started", protocol.TaskFailed)
			return false
		}
	}
	return true
}
