//go:build linux

package executor

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// waitHealth waits for a RUNNING status of task id whose health is
// healthy, after the first n statuses of the task, and returns how many
// statuses there are then.
func waitHealth(t *testing.T, f *testcluster.TestFramework, id string, after int, healthy bool) int {
	t.Helper()
	var seen int
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		sts := f.Statuses(protocol.TaskID(id))
		for i := after; i < len(sts); i++ {
			if s := sts[i]; s.State == protocol.TaskRunning && s.Healthy != nil && *s.Healthy == healthy {
				seen = i + 1
				return nil
			}
		}
		return errors.New("no such status yet")
	})
	return seen
}

// A command check reports the task unhealthy, healthy once the file it
// tests appears, and unhealthy again once it goes; a report-only check
// never kills.
func TestAgent_HealthCheckCommand(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	task := shellTask("svc", "sleep 1000")
	task.HealthCheck = &protocol.HealthCheck{Type: protocol.HealthCheckCommand, Command: `test -e "$ALLOT_SANDBOX/ok"`,
		Interval: 100 * time.Millisecond, Timeout: 2 * time.Second}
	launch(t, f, a.ID(), task)
	waitState(t, f, "svc", protocol.TaskRunning)
	n := waitHealth(t, f, "svc", 0, false)
	ok := filepath.Join(a.SandboxRoot(), sandboxOf(t, a, f.ID(), "svc"), "ok")
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	n = waitHealth(t, f, "svc", n, true)
	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, f, "svc", n, false)
	for _, s := range f.Statuses("svc") {
		if s.State.Terminal() {
			t.Fatalf("a report-only check ended the task: %+v", s)
		}
	}
	if err := f.Kill("svc"); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, f, "svc", protocol.TaskKilled); st.Reason != protocol.ReasonKilledByFramework || st.Healthy != nil {
		t.Fatalf("killed: %+v, want killed_by_framework with no health", st)
	}
}

// A TCP check is healthy while something listens on its port; once
// nothing does, the task is killed after two failures in a row.
func TestAgent_HealthCheckKills(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	task := shellTask("svc", "sleep 1000")
	task.HealthCheck = &protocol.HealthCheck{Type: protocol.HealthCheckTCP, Port: ln.Addr().(*net.TCPAddr).Port,
		Interval: 100 * time.Millisecond, Timeout: 2 * time.Second, ConsecutiveFailures: 2}
	launch(t, f, a.ID(), task)
	waitHealth(t, f, "svc", 0, true)
	ln.Close()
	st := waitState(t, f, "svc", protocol.TaskKilled)
	if st.Reason != protocol.ReasonTaskUnhealthy {
		t.Fatalf("killed: %+v, want task_unhealthy", st)
	}
	var unhealthy bool
	for _, s := range f.Statuses("svc") {
		unhealthy = unhealthy || s.State == protocol.TaskRunning && s.Healthy != nil && !*s.Healthy
	}
	if !unhealthy {
		t.Fatalf("statuses %+v: no RUNNING unhealthy before the kill", f.Statuses("svc"))
	}
}
