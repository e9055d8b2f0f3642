package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// launch starts the shim for a task whose spec.json, sp, is written in its
// control directory ctl, and waits for its report on a pipe (the shim's fd
// 3): the task's pid, or why it did not start.
func (r *Runner) launch(ctx context.Context, s Spec, sandbox, ctl string, sp shimSpec) (*Task, error) {
	logf, err := os.OpenFile(control(ctl, shimLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	args := append(append([]string{}, r.cfg.Shim[1:]...), ctl)
	cmd := exec.Command(r.cfg.Shim[0], args...)
	cmd.Env = append(os.Environ(), r.cfg.ShimEnv...)
	cmd.Dir = ctl
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw}
	// Its own session: no signal to the agent's process group or terminal
	// reaches it, and it outlives the agent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	logf.Close()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("%w: start shim: %w", ErrStart, err)
	}
	// The shim is our child and cannot be reaped before Wait, so its stat
	// is readable.
	start, err := procStart(cmd.Process.Pid)
	if err != nil {
		r.log.Warn("cannot read the shim's start time", "pid", cmd.Process.Pid, "error", err)
	}
	t := r.newTask(s.Name, sandbox, ctl, sp, cmd.Process.Pid, start, cmd.Process)
	go func() {
		_ = cmd.Wait()
		t.finish()
	}()

	reports := make(chan readyMsg, 1)
	go func() {
		defer pr.Close()
		var msg readyMsg
		if data, err := io.ReadAll(pr); err == nil && len(data) > 0 {
			if err := json.Unmarshal(data, &msg); err != nil {
				msg.Error = fmt.Sprintf("bad report from the shim: %v", err)
			}
		}
		reports <- msg
	}()
	select {
	case msg := <-reports:
		if msg.TaskPid > 0 {
			t.setPid(msg.TaskPid)
			t.log.Debug("task started", "pid", msg.TaskPid, "shim_pid", cmd.Process.Pid)
			return t, nil
		}
		// The shim exits right after a failure; wait for it, so that
		// nothing of this task runs on once Start has returned.
		select {
		case <-t.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if msg.Error != "" {
			return nil, fmt.Errorf("%w: %s", ErrStart, msg.Error)
		}
		// No report: the watcher recorded why the shim ended.
		e, _ := t.Exit()
		return nil, fmt.Errorf("%w: %s", ErrStart, e.Message)
	case <-ctx.Done():
		// The task is killed by its shim; its watcher reaps the shim.
		_ = t.Kill()
		return nil, ctx.Err()
	}
}
