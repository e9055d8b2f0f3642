//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// An agent restarting is a new Runner on the same work directory; the old
// one is simply no longer used.

func TestRunner_Reattach_RunningTaskThenKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := start(t, newRunner(t, dir), shellSpec("long", "exec sleep 60"))

	task, err := newRunner(t, dir).Reattach(context.Background(), "long")
	if err != nil {
		t.Fatal(err)
	}
	if _, done := task.Exit(); done {
		t.Fatal("reattached task is done, want running")
	}
	if task.Pid() != old.Pid() || task.Sandbox() != old.Sandbox() {
		t.Fatalf("got pid %d sandbox %s, want %d %s", task.Pid(), task.Sandbox(), old.Pid(), old.Sandbox())
	}
	if err := task.Kill(); err != nil {
		t.Fatal(err)
	}
	e := wait(t, task)
	if e.Reason != protocol.ReasonKilledByFramework || e.Signal != "SIGTERM" {
		t.Fatalf("got %+v, want killed_by_framework", e)
	}
	if e2 := wait(t, old); e2.Reason != e.Reason || !e2.EndedAt.Equal(e.EndedAt) {
		t.Fatalf("old runner saw %+v, new one %+v", e2, e)
	}
}

func TestRunner_Reattach_TaskFinishedWhileAgentDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wait(t, start(t, newRunner(t, dir), shellSpec("short", "echo bye >&2; exit 4")))

	task, err := newRunner(t, dir).Reattach(context.Background(), "short")
	if err != nil {
		t.Fatal(err)
	}
	e, done := task.Exit()
	if !done || code(e) != 4 || e.Reason != "" || e.Message != "bye" {
		t.Fatalf("got %+v done %v, want the recorded exit 4", e, done)
	}
	if task.Pid() <= 0 {
		t.Fatalf("pid %d", task.Pid())
	}
}

func TestRunner_Reattach_ShimKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := start(t, newRunner(t, dir), shellSpec("orphan", "exec sleep 60"))
	var rec shimRecord
	if err := readJSON(control(old.ctl, shimFile), &rec); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(rec.ShimPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	task, err := newRunner(t, dir).Reattach(context.Background(), "orphan")
	if err != nil {
		t.Fatal(err)
	}
	e := wait(t, task)
	if e.Reason != protocol.ReasonExecutorTerminated {
		t.Fatalf("got %+v, want executor_terminated", e)
	}
	// The unsupervised task was killed.
	waitGone(t, rec.TaskPid)
	if e2 := wait(t, old); e2.Reason != protocol.ReasonExecutorTerminated || !e2.EndedAt.Equal(e.EndedAt) {
		t.Fatalf("old runner saw %+v, new one %+v", e2, e)
	}
}

func TestRunner_Reattach_PidReusedByAnotherProcess(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := shellSpec("reused", "exit 0")
	sandbox, err := r.Prepare(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	// A record whose shim pid now belongs to this test process, which
	// started at another time.
	self, err := procStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJSONAtomic(control(r.controlOf(filepath.Base(sandbox)), specFile), shimSpec{TaskID: "reused"}); err != nil {
		t.Fatal(err)
	}
	rec := shimRecord{ShimPid: os.Getpid(), ShimStart: self + 1}
	if err := writeJSONAtomic(control(r.controlOf(filepath.Base(sandbox)), shimFile), rec); err != nil {
		t.Fatal(err)
	}
	task, err := r.Reattach(context.Background(), "reused")
	if err != nil {
		t.Fatal(err)
	}
	e, done := task.Exit()
	if !done || e.Reason != protocol.ReasonExecutorTerminated {
		t.Fatalf("got %+v done %v, want executor_terminated at once", e, done)
	}
	if err := task.Kill(); err != nil {
		t.Fatal(err)
	}
}

func TestRunner_Reattach_Errors(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	if _, err := r.Reattach(context.Background(), "never-started"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown sandbox: got %v, want ErrNotFound", err)
	}
	if _, err := r.Prepare(context.Background(), shellSpec("prepared", "true")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reattach(context.Background(), "prepared"); !errors.Is(err, ErrNotFound) {
		t.Errorf("prepared only: got %v, want ErrNotFound", err)
	}
	if _, err := r.Reattach(context.Background(), "../x"); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("bad name: got %v, want ErrInvalidSpec", err)
	}
	if err := os.WriteFile(control(r.controlOf("prepared"), specFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reattach(context.Background(), "prepared"); err == nil || !strings.Contains(err.Error(), "spec.json") {
		t.Errorf("corrupt spec: got %v", err)
	}
}

// A closed runner leaves its tasks' sandboxes alone: when a shim dies
// without recording an exit after its runners (the one that started it and
// one that reattached it) were closed, neither records executor_terminated
// nor ends its Task; the next runner does.
func TestRunner_Close_StopsWatching(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := newRunner(t, dir)
	// Not start: its cleanup waits for an end a closed runner never sees.
	// The last runner below kills the orphaned task.
	started, err := first.Start(context.Background(), shellSpec("closed", "exec sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	second := newRunner(t, dir)
	reattached, err := second.Reattach(context.Background(), "closed")
	if err != nil {
		t.Fatal(err)
	}
	var rec shimRecord
	if err := readJSON(control(started.ctl, shimFile), &rec); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second.Close()
	if err := syscall.Kill(rec.ShimPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, rec.ShimPid)
	// Three of the reattached task's poll intervals: an open runner would
	// have recorded the exit by then.
	for deadline := time.Now().Add(3 * pollInterval); time.Now().Before(deadline); {
		if _, err := readExit(started.ctl); !notExist(err) {
			t.Fatalf("a closed runner recorded an exit (err %v)", err)
		}
		for _, task := range []*Task{started, reattached} {
			if _, done := task.Exit(); done {
				t.Fatal("a closed runner ended its task")
			}
		}
		time.Sleep(10 * time.Millisecond)
	}

	task, err := newRunner(t, dir).Reattach(context.Background(), "closed")
	if err != nil {
		t.Fatal(err)
	}
	if e := wait(t, task); e.Reason != protocol.ReasonExecutorTerminated {
		t.Fatalf("the next runner got %+v, want executor_terminated", e)
	}
	waitGone(t, rec.TaskPid)
}
