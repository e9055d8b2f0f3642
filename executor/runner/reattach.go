package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/allot-project/allot/protocol"
)

// pollInterval is how often a reattached task's shim is checked.
const pollInterval = 100 * time.Millisecond

// Reattach finds the task started in sandbox name, by this or an earlier
// agent process. The Task is running if its shim is (the shim's pid and
// start time are checked, so a reused pid is not mistaken for it), Done with
// the recorded Exit if the task ended, or Done with Reason
// executor_terminated if the shim died without recording an exit; then the
// task's processes, left unsupervised, are killed. ErrNotFound means no task
// was started there.
func (r *Runner) Reattach(ctx context.Context, name string) (*Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	sandbox := filepath.Join(r.workDir, name)
	ctl := r.findControl(name, sandbox)
	var sp shimSpec
	if err := readJSON(control(ctl, specFile), &sp); notExist(err) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	} else if err != nil {
		return nil, err
	}
	var rec shimRecord
	recErr := readJSON(control(ctl, shimFile), &rec)
	t := r.newTask(name, sandbox, ctl, sp, rec.ShimPid, rec.ShimStart, nil)
	t.setPid(rec.TaskPid)
	if e, err := readExit(ctl); err == nil {
		t.end(e)
		return t, nil
	}
	if recErr == nil && alive(rec.ShimPid, rec.ShimStart) {
		// The handle is taken before the second check, so if the check
		// passes it refers to the shim and not to a later user of its pid.
		proc, err := os.FindProcess(rec.ShimPid)
		if err == nil && alive(rec.ShimPid, rec.ShimStart) {
			t.proc = proc
			go t.poll()
			t.log.Debug("reattached", "pid", rec.TaskPid, "shim_pid", rec.ShimPid)
			return t, nil
		}
		if err == nil {
			_ = proc.Release()
		}
	}
	t.finish()
	return t, nil
}

// poll watches a shim that is not our child until it is gone.
func (t *Task) poll() {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for range tick.C {
		if t.r.isClosed() {
			return
		}
		if t.Pid() == 0 {
			var rec shimRecord
			if readJSON(control(t.ctl, shimFile), &rec) == nil {
				t.setPid(rec.TaskPid)
			}
		}
		if !alive(t.shimPid, t.shimStart) {
			t.finish()
			_ = t.proc.Release()
			return
		}
	}
}

// collect returns the exit the shim recorded. If there is none, the shim
// died unexpectedly: collect kills what is left of the task, records an
// executor_terminated exit (unless another observer recorded one first)
// and returns the recorded one.
func (t *Task) collect() Exit {
	e, err := readExit(t.ctl)
	if err == nil {
		return e
	}
	msg := "the shim exited without recording the task's exit"
	if !notExist(err) {
		msg = fmt.Sprintf("the task's exit record is unreadable: %v", err)
	}
	var rec shimRecord
	if readJSON(control(t.ctl, shimFile), &rec) == nil && killOrphan(rec) {
		msg += "; the task's remaining processes were killed"
	}
	if last := tail(control(t.ctl, shimLog), 512); last != "" {
		msg += "; shim log: " + last
	}
	e = Exit{Reason: protocol.ReasonExecutorTerminated, Message: msg, EndedAt: time.Now()}
	t.log.Warn("shim died without recording the task's exit", "shim_pid", t.shimPid)
	if _, err := writeJSONOnce(control(t.ctl, exitFile), e); err != nil {
		t.log.Error("cannot record the exit", "error", err)
		return e
	}
	if recorded, err := readExit(t.ctl); err == nil {
		return recorded
	}
	return e
}

// isClosed reports whether Close was called.
func (r *Runner) isClosed() bool {
	r.watch.RLock()
	defer r.watch.RUnlock()
	return r.closed
}
