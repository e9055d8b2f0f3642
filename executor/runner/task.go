package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Task is a task started by Start or found by Reattach. Its methods may be
// called concurrently.
type Task struct {
	r       *Runner
	sandbox string
	// ctl is the task's control directory (control.go).
	ctl string
	// user and env are who the task runs as and its environment, from
	// its spec.
	user *Credential
	env  []string
	log  hclog.Logger
	// shimPid and shimStart identify the shim across pid reuse.
	shimPid   int
	shimStart uint64
	// proc is a handle on the shim (a pidfd where the kernel has them) for
	// signals; nil for a reattached task whose shim was already gone.
	proc *os.Process
	done chan struct{}
	once sync.Once

	mu   sync.Mutex
	pid  int
	exit Exit
}

func (r *Runner) newTask(name, sandbox, ctl string, sp shimSpec, shimPid int, shimStart uint64, proc *os.Process) *Task {
	return &Task{
		r: r, sandbox: sandbox, ctl: ctl, user: sp.User, env: sp.Env,
		shimPid: shimPid, shimStart: shimStart, proc: proc,
		log:  r.log.With("sandbox", name, "task_id", sp.TaskID),
		done: make(chan struct{}),
	}
}

// Done is closed when the task has ended and its Exit is known.
func (t *Task) Done() <-chan struct{} { return t.done }

// Exit returns how the task ended, and true, once it has ended.
func (t *Task) Exit() (Exit, bool) {
	select {
	case <-t.done:
	default:
		return Exit{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exit, true
}

// Wait blocks until the task has ended or ctx is done.
func (t *Task) Wait(ctx context.Context) (Exit, error) {
	select {
	case <-t.done:
		e, _ := t.Exit()
		return e, nil
	case <-ctx.Done():
		return Exit{}, ctx.Err()
	}
}

// Kill asks the task's shim to kill the task: SIGTERM to the task's
// process group, SIGKILL to all its processes after the grace period. The
// shim carries this out, so it completes even if the agent exits meanwhile.
// The Exit's Reason is then killed_by_framework. Kill returns at once;
// killing a task that has ended is a no-op.
func (t *Task) Kill() error { return t.KillWithGrace(0) }

// killRequest is what KillWithGrace leaves for the shim.
type killRequest struct {
	Grace time.Duration `json:"grace"`
}

// KillWithGrace kills the task as Kill does, with grace between SIGTERM
// and SIGKILL instead of the one it started with (0 keeps that one).
func (t *Task) KillWithGrace(grace time.Duration) error {
	select {
	case <-t.done:
		return nil // nothing to kill, and its sandbox is left as it ended
	default:
	}
	if grace > 0 {
		if err := writeJSONAtomic(control(t.ctl, killFile), killRequest{Grace: grace}); err != nil {
			t.log.Warn("could not record the kill's grace period; using the task's", "error", err)
		}
	}
	if t.proc == nil || !alive(t.shimPid, t.shimStart) {
		return nil // gone: the watcher will see it
	}
	t.log.Debug("killing task")
	if err := t.proc.Signal(syscall.SIGTERM); err != nil {
		if _, done := t.Exit(); done || errors.Is(err, os.ErrProcessDone) {
			return nil // it ended meanwhile
		}
		return err
	}
	return nil
}

// Sandbox returns the task's sandbox directory.
func (t *Task) Sandbox() string { return t.sandbox }

// User returns who the task runs as: nil for the agent's own user.
// Whatever runs on the task's behalf (a health check) runs as that user.
func (t *Task) User() *Credential { return t.user }

// Env returns the task's whole environment, KEY=VALUE.
func (t *Task) Env() []string { return slices.Clone(t.env) }

// Pid returns the pid of the task's process (the leader of its process
// group); 0 if the task never started.
func (t *Task) Pid() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pid
}

func (t *Task) setPid(pid int) {
	t.mu.Lock()
	t.pid = pid
	t.mu.Unlock()
}

// finish records the exit once the shim is gone: the one the shim wrote,
// or executor_terminated if it wrote none.
func (t *Task) finish() {
	t.r.watch.RLock()
	defer t.r.watch.RUnlock()
	if t.r.closed {
		return
	}
	t.once.Do(func() {
		e := t.collect()
		t.mu.Lock()
		t.exit = e
		t.mu.Unlock()
		t.log.Debug("task ended", "code", e.logCode(), "signal", e.Signal, "reason", e.Reason)
		close(t.done)
	})
}

// end marks a task whose exit is already known as done.
func (t *Task) end(e Exit) {
	t.once.Do(func() {
		t.mu.Lock()
		t.exit = e
		t.mu.Unlock()
		close(t.done)
	})
}

// readExit reads the exit recorded in the control directory ctl.
func readExit(ctl string) (Exit, error) {
	var e Exit
	err := readJSON(control(ctl, exitFile), &e)
	return e, err
}

// notExist reports whether err says a file is missing.
func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
