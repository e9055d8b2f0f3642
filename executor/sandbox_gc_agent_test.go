//go:build linux

package executor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// gcAgent runs an agent under a fake master with the sandbox collector
// configured by set; its disk threshold is 1, so that the test machine's
// own disk does not press.
func gcAgent(t *testing.T, set func(*Config)) (*fakeMaster, *agentProc) {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	m := newFakeMaster(t, c)
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	cfg.GCDiskThreshold = 1
	set(&cfg)
	return m, startAgent(t, cfg)
}

// launchFor sends the agent a launch of tasks for framework fw.
func (m *fakeMaster) launchFor(t *testing.T, agent protocol.AgentID, fw protocol.FrameworkID, tasks ...protocol.TaskInfo) {
	t.Helper()
	for i := range tasks {
		tasks[i].AgentID = agent
	}
	data, err := protocol.Encode(protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: fw, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	m.command(t, agent, data)
}

// shutdown sends the agent a ShutdownFrameworkCommand.
func (m *fakeMaster) shutdown(t *testing.T, agent protocol.AgentID, fw protocol.FrameworkID) {
	t.Helper()
	data, err := protocol.Encode(protocol.MsgShutdownFrameworkCommand, protocol.ShutdownFrameworkCommand{FrameworkID: fw})
	if err != nil {
		t.Fatal(err)
	}
	m.command(t, agent, data)
}

// endOf waits for the final status of task id of fw and returns when the
// agent said it ended.
func (m *fakeMaster) endOf(t *testing.T, fw protocol.FrameworkID, id protocol.TaskID) time.Time {
	t.Helper()
	var end time.Time
	testutilWaitFor(t, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, u := range m.updates {
			if u.Status.FrameworkID == fw && u.Status.TaskID == id && u.Status.State.Terminal() {
				end = time.Unix(0, u.Status.Timestamp)
				return nil
			}
		}
		return fmt.Errorf("no final status of %s/%s", fw, id)
	})
	return end
}

// runTasks launches tasks for fw and waits until they all finished.
func runTasks(t *testing.T, m *fakeMaster, a *agentProc, fw protocol.FrameworkID, tasks ...protocol.TaskInfo) {
	t.Helper()
	m.launchFor(t, a.ID(), fw, tasks...)
	for _, ti := range tasks {
		waitAgentTask(t, a.Agent, fw, string(ti.TaskID), protocol.TaskFinished)
	}
}

// writeTask writes n zero bytes to "out" in its sandbox.
func writeTask(id string, n int) protocol.TaskInfo {
	return shellTask(id, fmt.Sprintf("head -c %d /dev/zero > out", n))
}

// sandboxesSize is what the agent's sandboxes take on disk, measured by
// the test: each entry of sandboxes/ with everything in it.
func sandboxesSize(t *testing.T, a *Agent) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(a.SandboxRoot(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != a.SandboxRoot() {
			var fi fs.FileInfo
			if fi, err = d.Info(); err == nil {
				n += allocatedBytes(fi)
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while the test looks
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// metric returns the line of the agent's /metrics that starts with name.
func metric(t *testing.T, a *agentProc, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + a.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, name+" ") {
			return l
		}
	}
	return ""
}

// TestAgent_SandboxReadableUntilDelay: an ended task's sandbox is served
// by the file server until its delay has passed since the task ended, and
// is gone after; a hostile one (links out of it, directories without
// permissions) goes too, and what its links point to stays.
func TestAgent_SandboxReadableUntilDelay(t *testing.T) {
	t.Parallel()
	// Long enough for the test to read the sandbox first on a loaded
	// machine.
	const delay = 4 * time.Second
	outside := t.TempDir()
	mkfile(t, filepath.Join(outside, "dir", "secret"), 10)
	m, a := gcAgent(t, func(c *Config) { c.GCDelay, c.GCInterval = delay, 20*time.Millisecond })
	hostile := fmt.Sprintf("ln -s %[1]s/dir/secret link && ln -s %[1]s/dir dirlink && mkdir -p locked/deeper && "+
		"echo x > locked/deeper/f && chmod 000 locked/deeper locked", outside)
	runTasks(t, m, a, "fw-r", shellTask("w", "echo hello > out"), shellTask("evil", hostile))
	end := m.endOf(t, "fw-r", "w")
	sandbox := sandboxOf(t, a, "fw-r", "w")
	evil := sandboxOf(t, a, "fw-r", "evil")

	code, body := readFile(t, a, sandbox+"/out", a.FilesToken())
	if time.Since(end) >= delay {
		t.Fatalf("the test was too slow to read the sandbox within its delay (%s)", time.Since(end))
	}
	if code != http.StatusOK || body != "hello\n" {
		t.Fatalf("read within the delay: %d %q, want 200 hello", code, body)
	}
	testutilWaitFor(t, func() error {
		if code, _ := readFile(t, a, sandbox+"/out", a.FilesToken()); code != http.StatusNotFound {
			return fmt.Errorf("read %s after the task ended: %d, want 404 once removed", time.Since(end), code)
		}
		return nil
	})
	if gone := time.Since(end); gone < delay {
		t.Fatalf("removed %s after the task ended, before its delay %s", gone, delay)
	}
	testutilWaitFor(t, func() error {
		if exists(filepath.Join(a.SandboxRoot(), evil)) {
			return fmt.Errorf("the hostile sandbox %s is still there", evil)
		}
		return nil
	})
	if data, err := os.ReadFile(filepath.Join(outside, "dir", "secret")); err != nil || len(data) != 10 {
		t.Fatalf("the target of the hostile links: %q, %v; want it intact", data, err)
	}
	// The records go right after the sandbox, in the same pass.
	testutilWaitFor(t, func() error {
		if exists(filepath.Join(a.WorkDir(), controlDir, sandbox)) {
			return fmt.Errorf("the shim's records of the removed sandbox %s are still there", sandbox)
		}
		return nil
	})
	testutilWaitFor(t, func() error {
		if got := metric(t, a, `allot_agent_sandboxes_removed_total{reason="delay"}`); !strings.HasSuffix(got, " 2") {
			return fmt.Errorf("metric %q, want 2 removed for their delay", got)
		}
		return nil
	})
}

// TestAgent_SandboxBudgetAfterShutdown: over its budget, the agent keeps
// every ended sandbox of frameworks that may read them (and says so in
// its metrics); once told a framework is gone, it removes that
// framework's ended sandboxes, oldest end first, until under the budget,
// and keeps the others.
func TestAgent_SandboxBudgetAfterShutdown(t *testing.T) {
	t.Parallel()
	// Each sandbox takes a little over 200 kB: three fit, four do not,
	// and removing two of them brings four under.
	const budget = 500_000
	m, a := gcAgent(t, func(c *Config) { c.GCDelay, c.GCInterval, c.GCDiskBudget = time.Hour, time.Hour, budget })
	for _, id := range []string{"a1", "a2", "a3"} {
		runTasks(t, m, a, "fw-a", writeTask(id, 200_000))
	}
	runTasks(t, m, a, "fw-b", writeTask("b1", 200_000))
	names := map[string]string{}
	for _, k := range []string{"fw-a/a1", "fw-a/a2", "fw-a/a3", "fw-b/b1"} {
		fw, id, _ := strings.Cut(k, "/")
		names[id] = sandboxOf(t, a, protocol.FrameworkID(fw), id)
	}
	// The end of b1 started a pass, which found nothing it may remove.
	testutilWaitFor(t, func() error {
		if s := a.gc.snapshot(); s.stuck == 0 || s.sandboxes != 4 {
			return fmt.Errorf("collector %+v, want stuck over the budget with 4 sandboxes", s)
		}
		return nil
	})
	if got := metric(t, a, "allot_agent_sandbox_gc_stuck_total"); got == "" || strings.HasSuffix(got, " 0") {
		t.Errorf("metric %q, want the stuck passes counted", got)
	}
	for id, name := range names {
		if !exists(filepath.Join(a.SandboxRoot(), name)) {
			t.Fatalf("%s removed while its framework may read it", id)
		}
	}

	m.shutdown(t, a.ID(), "fw-a")
	testutilWaitFor(t, func() error {
		if n := a.gc.snapshot().removed[gcReasonPressure]; n != 2 {
			return fmt.Errorf("%d removed for the budget, want 2", n)
		}
		return nil
	})
	if n := sandboxesSize(t, a.Agent); n > budget {
		t.Errorf("sandboxes take %d bytes, budget %d", n, budget)
	}
	for id, want := range map[string]bool{"a1": false, "a2": false, "a3": true, "b1": true} {
		if got := exists(filepath.Join(a.SandboxRoot(), names[id])); got != want {
			t.Errorf("%s there: %v, want %v", id, got, want)
		}
	}
	if got := metric(t, a, `allot_agent_sandboxes_removed_total{reason="pressure"}`); !strings.HasSuffix(got, " 2") {
		t.Errorf("metric %q, want 2 removed for the budget", got)
	}
	if !a.gc.isGone("fw-a") || a.gc.isGone("fw-b") {
		t.Error("want fw-a known gone, fw-b not")
	}
}

// TestAgent_ShutdownOfFrameworkWithNothingRunning: a shutdown of a
// framework the agent runs nothing of (the leader tells every agent that
// ran its tasks) kills nothing, and records the framework gone.
func TestAgent_ShutdownOfFrameworkWithNothingRunning(t *testing.T) {
	t.Parallel()
	m, a := gcAgent(t, func(c *Config) { c.GCInterval = time.Hour })
	m.launchFor(t, a.ID(), "fw-live", shellTask("sleeper", "exec sleep 60"))
	waitAgentTask(t, a.Agent, "fw-live", "sleeper", protocol.TaskRunning)
	m.shutdown(t, a.ID(), "fw-none")
	testutilWaitFor(t, func() error {
		if !a.gc.isGone("fw-none") {
			return fmt.Errorf("fw-none not recorded gone")
		}
		// Written after it is known in memory.
		if data, err := os.ReadFile(filepath.Join(a.WorkDir(), goneFile)); err != nil || !strings.Contains(string(data), "fw-none") {
			return fmt.Errorf("%s: %q, %v; want fw-none in it", goneFile, data, err)
		}
		return nil
	})
	if ts, _ := agentTask(a.Agent, "fw-live", "sleeper"); ts.State != protocol.TaskRunning {
		t.Fatalf("another framework's task: %+v, want it running", ts)
	}
}
