package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
)

// The jobs commands on allot dev: a bad file is refused with positions
// and nothing submitted, whether HCL refuses it or no agent could run it;
// a good one is run by `allot jobs serve`, shown by status, and stopped.
func TestJobs_onDevCluster(t *testing.T) {
	t.Parallel()
	env := startDev(t)
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range refusedJobFiles {
		_, errOut, code := runWithEnv(t, env, "jobs", "run", write(tc.file, tc.src))
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("jobs run %s: exit %d, stderr %q; want 1 and %q", tc.file, code, errOut, tc.want)
		}
	}
	if out, errOut, code := runWithEnv(t, env, "jobs", "status"); code != 0 || strings.Contains(out, "\na ") {
		t.Fatalf("status after refused files: exit %d %q %q", code, out, errOut)
	}

	serve := allotCommand(env, "jobs", "serve")
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGINT); _ = serve.Wait() })
	job := write("web.hcl", webJobHCL)
	out, errOut, code := runWithEnv(t, env, "jobs", "run", job)
	if code != 0 || !strings.Contains(out, "job web: version 1 submitted") {
		t.Fatalf("jobs run: exit %d %q %q", code, out, errOut)
	}
	if out, _, _ := runWithEnv(t, env, "jobs", "run", job); !strings.Contains(out, "unchanged") {
		t.Errorf("the same file again: %q", out)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		out, errOut, _ := runWithEnv(t, env, "jobs", "status")
		if !strings.Contains(out, "web  1        running  2 running") {
			return fmt.Errorf("status %q %q", out, errOut)
		}
		return nil
	})
	out, _, _ = runWithEnv(t, env, "jobs", "status", "web")
	if strings.Count(out, " running ") != 2 || !strings.Contains(out, "web.g.0.v1.0") {
		t.Errorf("status web: %q", out)
	}
	// A second version, its history, and a revert to the first.
	src, _ := os.ReadFile(job)
	write("web.hcl", strings.Replace(strings.Replace(string(src), `args    = ["300"]`, `args    = ["301"]`, 1), "count = 2", "count = 3", 1))
	// Checked first: the plan is printed and nothing submitted.
	if out, errOut, code := runWithEnv(t, env, "jobs", "run", "--check", job); code != 0 ||
		!strings.Contains(out, "job web: would be version 2 (nothing submitted)\n  group g: 2 replaced, 1 started\n") {
		t.Fatalf("jobs run --check v2: %d %q %q", code, out, errOut)
	}
	if out, _, _ := runWithEnv(t, env, "jobs", "status", "web"); !strings.Contains(out, "versions kept: [1]") {
		t.Fatalf("status after a check: %q", out)
	}
	if out, errOut, code := runWithEnv(t, env, "jobs", "run", job); code != 0 ||
		!strings.Contains(out, "version 2 submitted\n  group g: 2 replaced, 1 started\n") {
		t.Fatalf("jobs run v2: %d %q %q", code, out, errOut)
	}
	out, _, _ = runWithEnv(t, env, "jobs", "history", "-p", "web")
	if !strings.HasPrefix(out, "version 2 (current") || !strings.Contains(out, "\nversion 1") ||
		!strings.Contains(out, `  |       args    = ["301"]`) || !strings.Contains(out, `  |       args    = ["300"]`) {
		t.Errorf("history: %q", out)
	}
	if out, errOut, code := runWithEnv(t, env, "jobs", "revert", "web", "1"); code != 0 ||
		!strings.Contains(out, "version 3 is version 1's file\n  group g: 2 replaced, 1 stopped\n") {
		t.Fatalf("revert: %d %q %q", code, out, errOut)
	}
	if _, errOut, code := runWithEnv(t, env, "jobs", "revert", "web", "9"); code != 1 || !strings.Contains(errOut, "keeps no version 9") {
		t.Errorf("revert to a version not kept: %d %q", code, errOut)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		out, _, _ := runWithEnv(t, env, "jobs", "status", "web")
		// Version 3 is version 1's file: instances of either count as it.
		if !strings.Contains(out, "version 3, running") || strings.Count(out, ".v2.") != 0 || strings.Count(out, " running ") != 2 {
			return fmt.Errorf("status %q", out)
		}
		return nil
	})
	if _, errOut, code := runWithEnv(t, env, "jobs", "stop", "web"); code != 0 {
		t.Fatalf("jobs stop: %d %q", code, errOut)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		out, _, _ := runWithEnv(t, env, "jobs", "status")
		if !strings.Contains(out, "web  3        stopped") || strings.Contains(out, "running") {
			return fmt.Errorf("status %q", out)
		}
		return nil
	})
}

// The job runner as processes: the active one killed with SIGKILL, a
// waiting one takes over once its lease lapses; that one killed too and a
// new one started, it adopts the instances. Throughout, the same three
// tasks run, checked against the leader's state: none launched twice.
func TestJobs_runnersKilled(t *testing.T) {
	t.Parallel()
	env := startDev(t)
	serve := func() (*exec.Cmd, *lockedBuffer) {
		cmd := allotCommand(env, "jobs", "serve", "--lease-ttl", "2s", "--log-level", "info")
		errb := &lockedBuffer{}
		cmd.Stderr = errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, errb
	}
	kill := func(cmd *exec.Cmd) {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	running := func() []string { return keepRunning(t, env) }
	live := func() int { return keepLive(t, env) }
	first, _ := serve()
	job := filepath.Join(t.TempDir(), "keep.hcl")
	if err := os.WriteFile(job, []byte(keepJobHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runWithEnv(t, env, "jobs", "run", job); code != 0 {
		t.Fatalf("jobs run: %q", errOut)
	}
	var before []string
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if before = running(); len(before) != 3 {
			return fmt.Errorf("running %v", before)
		}
		return nil
	})
	second, secondErr := serve()
	testutil.WaitFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if !strings.Contains(secondErr.String(), "waiting for its lease to lapse") {
			return fmt.Errorf("the second runner is not waiting: %q", secondErr.String())
		}
		return nil
	})
	kill(first)
	testutil.WaitFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if !strings.Contains(secondErr.String(), "taking over") {
			return errors.New("the second runner has not taken over")
		}
		return nil
	})
	// Once it has planned (the master confirmed the adopted instances),
	// the same three run and nothing more.
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		out, _, _ := runWithEnv(t, env, "jobs", "status", "keep")
		if strings.Count(out, " running ") != 3 {
			return fmt.Errorf("status %q", out)
		}
		return nil
	})
	if now := running(); !slices.Equal(now, before) || live() != 3 {
		t.Fatalf("after the takeover %v run (%d live), before %v", now, live(), before)
	}
	kill(second)
	serve()
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		out, _, _ := runWithEnv(t, env, "jobs", "status", "keep")
		if !strings.Contains(out, "running") || strings.Count(out, " running ") != 3 {
			return fmt.Errorf("status %q", out)
		}
		return nil
	})
	if now := running(); !slices.Equal(now, before) || live() != 3 {
		t.Fatalf("after a restart %v run (%d live), before %v", now, live(), before)
	}
	// allot dev leaves tasks running when it stops: end them first.
	if _, errOut, code := runWithEnv(t, env, "jobs", "stop", "keep"); code != 0 {
		t.Fatalf("jobs stop: %q", errOut)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if n := live(); n != 0 {
			return fmt.Errorf("%d tasks live", n)
		}
		return nil
	})
}

// refusedJobFiles are job files `allot jobs run` refuses, each with what
// its error names.
var refusedJobFiles = []struct {
	file, src, want string
}{
	{"syntax.hcl", "job \"a\" {\n  group \"g\" {\n    count = \n  }\n}\n", "syntax.hcl:3:13: Invalid expression"},
	{"field.hcl", "job \"a\" {\n  colour = \"red\"\n}\n", "field.hcl:2:3: Unsupported argument"},
	{"nowhere.hcl", "job \"a\" {\n  group \"g\" {\n    constraints = [\"rack == r9\"]\n    task \"t\" {\n      command = \"true\"\n    }\n  }\n}\n",
		"nowhere.hcl:2:3: group \"g\": none of the 2 agents meets its constraints (rack == \"r9\")"},
	{"huge.hcl", "job \"a\" {\n  group \"g\" {\n    task \"t\" {\n      command = \"true\"\n      resources {\n        cpus = 64\n      }\n    }\n  }\n}\n",
		"huge.hcl:2:3: group \"g\": an instance needs cpus:64000"},
}

// webJobHCL is a service of two sleeping instances.
const webJobHCL = `job "web" {
  group "g" {
    count = 2
    task "t" {
      command = "sleep"
      args    = ["300"]
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
}`

// keepJobHCL is a service of three sleeping instances.
const keepJobHCL = `job "keep" {
  group "g" {
    count = 3
    task "t" {
      command = "sleep"
      args    = ["300"]
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
}`

// keepRunning lists the RUNNING tasks of job keep, sorted.
func keepRunning(t *testing.T, env []string) []string {
	t.Helper()
	out, _, _ := runWithEnv(t, env, "tasks", "list")
	var ids []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.HasPrefix(f[1], "keep.") && f[3] == "RUNNING" {
			ids = append(ids, f[1])
		}
	}
	slices.Sort(ids)
	return ids
}

// keepLive counts the tasks of job keep that are staging, starting or
// running.
func keepLive(t *testing.T, env []string) int {
	t.Helper()
	out, _, _ := runWithEnv(t, env, "tasks", "list")
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.HasPrefix(f[1], "keep.") &&
			(f[3] == "STAGING" || f[3] == "STARTING" || f[3] == "RUNNING") {
			n++
		}
	}
	return n
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
