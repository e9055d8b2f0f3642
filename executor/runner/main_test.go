//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// The test binary doubles as the shim and as task helpers: the runner
// re-executes it with envShim set (Config.ShimEnv), and tasks run it with
// envHelper set in their Spec.Env.
const (
	envShim   = "ALLOT_RUNNER_TEST_SHIM"
	envHelper = "ALLOT_RUNNER_TEST_HELPER"
)

func TestMain(m *testing.M) {
	if os.Getenv(envShim) == "1" {
		os.Exit(ShimMain(os.Args[1:]))
	}
	if h := os.Getenv(envHelper); h != "" {
		os.Exit(runHelper(h))
	}
	// Fails the tests if any leaves a goroutine running.
	goleak.VerifyTestMain(m)
}

// runHelper runs a task helper. "alloc" allocates and touches 4 MiB every
// 10 ms, up to 1 GiB, then idles until killed; "hold" allocates and
// touches 32 MiB, holds it for 300 ms and exits 0.
func runHelper(name string) int {
	switch name {
	case "alloc":
	case "hold":
		b := make([]byte, 32<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		time.Sleep(300 * time.Millisecond)
		runtime.KeepAlive(b)
		return 0
	default:
		return 2
	}
	var hold [][]byte
	for range 256 {
		b := make([]byte, 4<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hold = append(hold, b)
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Minute)
	runtime.KeepAlive(hold)
	return 0
}

// waitTimeout bounds every wait for a task in the tests.
const waitTimeout = 20 * time.Second

// testConfig returns a config that runs the test binary as the shim, in
// portable isolation, on workDir. The control directory is next to it, but
// not the default one: the work directories of one test share a parent.
func testConfig(t *testing.T, workDir string) Config {
	t.Helper()
	return Config{
		WorkDir:    workDir,
		ControlDir: workDir + "-control",
		Shim:       []string{os.Args[0]},
		// The race runtime otherwise waits a second when the shim exits.
		ShimEnv:   []string{envShim + "=1", "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"},
		Isolation: IsolationPortable,
		Logger:    testlog.New(t),
	}
}

// newRunner returns a runner on workDir (a fresh one if empty) and checks,
// when the test ends, that no shim reported a data race.
func newRunner(t *testing.T, workDir string) *Runner {
	t.Helper()
	if workDir == "" {
		workDir = t.TempDir()
	}
	r, err := New(testConfig(t, workDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkShimLogs(t, r.controlDir) })
	return r
}

// checkShimLogs fails the test if a shim's log reports a data race or a
// panic; shims run the race-enabled test binary.
func checkShimLogs(t *testing.T, controlDir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(controlDir, "*", shimLog))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if s := string(data); strings.Contains(s, "DATA RACE") || strings.Contains(s, "panic:") {
			t.Errorf("%s:\n%s", l, s)
		}
	}
}

// shellSpec is a task running script with /bin/sh.
func shellSpec(name, script string) Spec {
	return Spec{
		TaskID:  "task-" + name,
		Name:    name,
		Command: protocol.CommandInfo{Shell: true, Value: script},
	}
}

// start starts s and, when the test ends, kills the task and waits for it,
// so that no task outlives its sandbox.
func start(t *testing.T, r *Runner, s Spec) *Task {
	t.Helper()
	task, err := r.Start(context.Background(), s)
	if err != nil {
		t.Fatalf("start %s: %v", s.Name, err)
	}
	t.Cleanup(func() { stop(t, task) })
	return task
}

// stop kills a task and waits for its end.
func stop(t *testing.T, task *Task) {
	t.Helper()
	if err := task.Kill(); err != nil {
		t.Errorf("kill: %v", err)
	}
	wait(t, task)
}

// wait waits for the task to end.
func wait(t *testing.T, task *Task) Exit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	e, err := task.Wait(ctx)
	if err != nil {
		t.Fatalf("wait for task in %s: %v", task.Sandbox(), err)
	}
	return e
}

// waitFile waits until a file exists in the task's sandbox.
func waitFile(t *testing.T, task *Task, name string) {
	t.Helper()
	path := filepath.Join(task.Sandbox(), name)
	exists := func() bool { _, err := os.Stat(path); return err == nil }
	err := testutil.Poll(waitTimeout, 5*time.Millisecond, func() error {
		if _, done := task.Exit(); done || exists() {
			return nil
		}
		return fmt.Errorf("%s not created yet", name)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !exists() {
		e, _ := task.Exit()
		t.Fatalf("task ended before creating %s: %+v", name, e)
	}
}

// code returns an Exit's code, or -1 without one.
func code(e Exit) int {
	if e.Code == nil {
		return -1
	}
	return *e.Code
}
