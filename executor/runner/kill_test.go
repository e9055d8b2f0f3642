//go:build linux

package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

func TestTask_Kill_WellBehavedTask(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := shellSpec("term", "exec sleep 60")
	s.Grace = time.Minute // never reached: sleep dies on SIGTERM
	task := start(t, r, s)
	if err := task.Kill(); err != nil {
		t.Fatal(err)
	}
	e := wait(t, task)
	if e.Reason != protocol.ReasonKilledByFramework || e.Signal != "SIGTERM" || e.Code != nil {
		t.Fatalf("got %+v, want killed_by_framework by SIGTERM", e)
	}
	if err := task.Kill(); err != nil {
		t.Fatalf("kill after the end: %v", err)
	}
}

func TestTask_Kill_EscalatesToSIGKILLAfterGrace(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	// Both the shell and its background child ignore SIGTERM.
	s := shellSpec("stubborn", `trap '' TERM; sleep 60 & echo $! > child; touch ready; wait`)
	s.Grace = 200 * time.Millisecond
	task := start(t, r, s)
	waitFile(t, task, "ready")
	child := readPid(t, filepath.Join(task.Sandbox(), "child"))
	killed := time.Now()
	if err := task.Kill(); err != nil {
		t.Fatal(err)
	}
	e := wait(t, task)
	if e.Reason != protocol.ReasonKilledByFramework || e.Signal != "SIGKILL" {
		t.Fatalf("got %+v, want killed_by_framework by SIGKILL", e)
	}
	if took := time.Since(killed); took < s.Grace {
		t.Fatalf("SIGKILL after %s, before the %s grace", took, s.Grace)
	}
	if !strings.Contains(e.Message, "grace") {
		t.Errorf("message %q does not mention the grace period", e.Message)
	}
	waitGone(t, child)
}

// TestTask_KillWithGrace_Overrides kills a task that ignores SIGTERM with
// a grace far shorter than the one it started with: SIGKILL follows after
// the kill's grace, and the message names it.
func TestTask_KillWithGrace_Overrides(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := shellSpec("override", `trap '' TERM; touch ready; while true; do sleep 0.05; done`)
	s.Grace = time.Hour
	task := start(t, r, s)
	waitFile(t, task, "ready")
	const grace = 150 * time.Millisecond
	killed := time.Now()
	if err := task.KillWithGrace(grace); err != nil {
		t.Fatal(err)
	}
	e := wait(t, task)
	if took := time.Since(killed); e.Signal != "SIGKILL" || took < grace {
		t.Fatalf("got %+v after %s, want SIGKILL no sooner than %s", e, took, grace)
	}
	if !strings.Contains(e.Message, grace.String()) {
		t.Errorf("message %q does not name the %s grace", e.Message, grace)
	}
}

func TestTask_Exit_KillsLeftoverProcesses(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	task := start(t, r, shellSpec("leftover", `sleep 60 & echo $! > child`))
	e := wait(t, task)
	if code(e) != 0 {
		t.Fatalf("got %+v", e)
	}
	waitGone(t, readPid(t, filepath.Join(task.Sandbox(), "child")))
}

func TestTask_MemoryLimit_Portable(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	s := Spec{
		TaskID:  "hog",
		Name:    "hog",
		Command: protocol.CommandInfo{Value: os.Args[0]},
		Env:     map[string]string{envHelper: "alloc"},
		Limits:  Limits{MemMiB: 64},
	}
	e := wait(t, start(t, r, s))
	if e.Reason != protocol.ReasonMemoryLimit || e.Signal != "SIGKILL" {
		t.Fatalf("got %+v, want memory_limit by SIGKILL", e)
	}
	var used, limit int64
	if _, err := fmt.Sscanf(e.Message, "memory %d MiB over limit %d MiB", &used, &limit); err != nil || limit != 64 || used <= 64 {
		t.Fatalf("message %q: want memory N MiB over limit 64 MiB with N > 64", e.Message)
	}
	if e.MemPeak <= 64<<20 {
		t.Fatalf("peak %d bytes, want over the 64 MiB the task was killed for", e.MemPeak)
	}
}

// TestTask_MemPeak: a task's exit carries the most memory it held: at
// least the 32 MiB it touched, within what it could have held.
func TestTask_MemPeak(t *testing.T) {
	t.Parallel()
	checkMemPeak(t, newRunner(t, ""))
}

func checkMemPeak(t *testing.T, r *Runner) {
	t.Helper()
	s := Spec{
		TaskID: "holder", Name: "holder", Command: protocol.CommandInfo{Value: os.Args[0]},
		Env: map[string]string{envHelper: "hold"}, Limits: Limits{MemMiB: 512},
	}
	e := wait(t, start(t, r, s))
	if code(e) != 0 {
		t.Fatalf("got %+v, want exit 0", e)
	}
	if e.MemPeak < 32<<20 || e.MemPeak > 512<<20 {
		t.Fatalf("peak %d bytes, want between the 32 MiB it touched and its 512 MiB limit", e.MemPeak)
	}
}

// readPid reads a pid written by a task.
func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone waits until pid no longer runs (gone or a zombie).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	testutil.WaitFor(t, waitTimeout, 5*time.Millisecond, func() error {
		if st, err := readProcStat(pid); err == nil && st.state != 'Z' && st.state != 'X' {
			return fmt.Errorf("process %d still runs (state %c)", pid, st.state)
		}
		return nil
	})
}
