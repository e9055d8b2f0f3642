//go:build linux

package executor

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

func TestAgent_DuplicateLaunchIgnored(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	nc := c.Connect("test")
	task := shellTask("dup", "echo once >> ../dup-runs; exec sleep 60")
	launch(t, f, a.ID(), task)
	waitState(t, f, "dup", protocol.TaskRunning)
	// RUNNING means started, not that the shell got to its echo; the kill
	// below must not beat it.
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if data, err := os.ReadFile(a.SandboxRoot() + "/dup-runs"); err != nil || len(data) == 0 {
			return fmt.Errorf("the task has not run its echo yet (%v)", err)
		}
		return nil
	})

	// A new leader resends launches still STAGING; commands are handled in
	// order, so once the kill is seen the resent launch was handled.
	task.AgentID, task.Name = a.ID(), "dup"
	publish(t, nc, c, a.ID(), protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: f.ID(), Tasks: []protocol.TaskInfo{task}})
	publish(t, nc, c, a.ID(), protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: f.ID(), TaskID: "dup"})
	waitState(t, f, "dup", protocol.TaskKilled)
	want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskKilling, protocol.TaskKilled}
	if got := uniqueStates(f.Statuses("dup")); !equalStates(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if data, err := os.ReadFile(a.SandboxRoot() + "/dup-runs"); err != nil || string(data) != "once\n" {
		t.Fatalf("the task ran %q (%v), want once", data, err)
	}
}

func TestAgent_BadCommandsAndDirectLaunches(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	nc := c.Connect("test")

	// Garbage, a message of the wrong type, and launches that cannot be
	// taken apart are dropped.
	for _, data := range [][]byte{nil, []byte("not msgpack"), {0x81, 0xa1, 'v'}, {0xde, 0xff, 0xff}} {
		publishRaw(t, nc, c, a.ID(), data)
	}
	publish(t, nc, c, a.ID(), protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: a.ID()})
	publish(t, nc, c, a.ID(), protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: "bad framework", Tasks: []protocol.TaskInfo{shellTask("x", "true")}})
	publish(t, nc, c, a.ID(), protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: f.ID(), Tasks: []protocol.TaskInfo{{TaskID: "no id!"}}})
	publish(t, nc, c, a.ID(), protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: f.ID()})

	// Launches the master did not send: refused by the agent's own checks.
	direct := func(ti protocol.TaskInfo) {
		ti.AgentID = a.ID()
		publish(t, nc, c, a.ID(), protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: f.ID(), Tasks: []protocol.TaskInfo{ti}})
	}
	huge := shellTask("huge", "true")
	huge.Resources.Scalars[protocol.ResCPUs] = 5000
	direct(huge)
	if ts := waitAgentTask(t, a.Agent, f.ID(), "huge", protocol.TaskError); ts.Reason != protocol.ReasonTaskInvalid || !strings.Contains(ts.Message, "exceed") {
		t.Fatalf("task beyond the agent's resources: got %+v, want task_invalid", ts)
	}
	noCommand := shellTask("no-command", "")
	direct(noCommand)
	if ts := waitAgentTask(t, a.Agent, f.ID(), "no-command", protocol.TaskError); ts.Reason != protocol.ReasonTaskInvalid {
		t.Fatalf("task without a command: got %+v, want task_invalid", ts)
	}
	otherAgent := shellTask("other-agent", "true")
	otherAgent.AgentID = "ag-other"
	publish(t, nc, c, a.ID(), protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: f.ID(), Tasks: []protocol.TaskInfo{otherAgent}})
	if ts := waitAgentTask(t, a.Agent, f.ID(), "other-agent", protocol.TaskError); !strings.Contains(ts.Message, "ag-other") {
		t.Fatalf("task for another agent: got %+v", ts)
	}

	// A kill of a task the agent never had is answered with LOST, and a
	// late launch of it is not started.
	publish(t, nc, c, a.ID(), protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: f.ID(), TaskID: "ghost"})
	if ts := waitAgentTask(t, a.Agent, f.ID(), "ghost", protocol.TaskLost); ts.Reason != protocol.ReasonTaskUnknown || ts.Sandbox != "" {
		t.Fatalf("kill of an unknown task: got %+v, want LOST task_unknown without a sandbox", ts)
	}
	direct(shellTask("ghost", "true"))

	// The agent carries on.
	launch(t, f, a.ID(), shellTask("after", "echo fine"))
	waitState(t, f, "after", protocol.TaskFinished)
	if ts, _ := agentTask(a.Agent, f.ID(), "ghost"); ts.State != protocol.TaskLost {
		t.Fatalf("late launch of a killed unknown task: got %+v, want it still LOST", ts)
	}
	if _, err := os.Stat(a.SandboxRoot() + "/" + string(f.ID()) + "_ghost"); err == nil {
		t.Fatal("the late launch of a killed unknown task made a sandbox")
	}
}

func TestAgent_ShutdownFramework(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	g := c.NewFramework(testcluster.FrameworkOptions{Name: "other"})
	launch(t, f, a.ID(), shellTask("s1", "exec sleep 60"), shellTask("s2", "exec sleep 60"))
	launch(t, g, a.ID(), shellTask("keep", waitScript))
	for _, id := range []string{"s1", "s2"} {
		waitState(t, f, id, protocol.TaskRunning)
	}
	waitState(t, g, "keep", protocol.TaskRunning)
	publish(t, c.Connect("test"), c, a.ID(), protocol.MsgShutdownFrameworkCommand, protocol.ShutdownFrameworkCommand{FrameworkID: f.ID()})
	for _, id := range []string{"s1", "s2"} {
		if st := waitState(t, f, id, protocol.TaskKilled); st.Reason != protocol.ReasonFrameworkRemoved {
			t.Fatalf("%s: got %+v, want framework_removed", id, st)
		}
	}
	touch(t, a.Agent, sandboxOf(t, a, g.ID(), "keep"), "go")
	waitState(t, g, "keep", protocol.TaskFinished)
}
