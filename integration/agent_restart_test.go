package integration

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// taskPid reads the pid a waitForGo task recorded in its sandbox.
func taskPid(t *testing.T, e *executors.Executor, sandbox string) int {
	t.Helper()
	path := sandboxFile(e, sandbox, "pid")
	var pid int
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if pid, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
			return fmt.Errorf("pid file %q: %w", data, err)
		}
		return nil
	})
	return pid
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// TestAgent_RestartKeepsTaskRunning stops and starts a real agent twice
// while its tasks run; one of them ends while the agent is down. The
// tasks' processes outlive the agent, the master keeps them RUNNING, the
// agent comes back under the same ID, and each final status reaches the
// framework once and is acknowledged.
func TestAgent_RestartKeepsTaskRunning(t *testing.T) {
	t.Parallel()
	// Agents stay reachable without heartbeats for far longer than a
	// restart takes.
	c := testcluster.New(t, testcluster.Options{Masters: 3, AgentTimeout: 30 * time.Second})
	e := executors.New(t, c, executors.Options{})
	id := e.ID()
	f := startSDK(t, c, framework.WithName("restart"))
	fw := f.d.ID()
	f.launch(t, id, shTask("stays", waitForGo), shTask("ends", waitForGo))
	f.rec.WaitState(t, "stays", protocol.TaskRunning)
	f.rec.WaitState(t, "ends", protocol.TaskRunning)
	stays, ends := sandboxOf(t, e, fw, "stays"), sandboxOf(t, e, fw, "ends")
	staysPid, endsPid := taskPid(t, e, stays), taskPid(t, e, ends)
	before, ok := c.WaitForLeader().View().Agent(id)
	if !ok {
		t.Fatalf("the master does not know agent %s", id)
	}

	e.Stop()
	// "ends" ends while the agent is down.
	touchIn(t, e, ends, "go")
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		if alive(endsPid) {
			return fmt.Errorf("task process %d still runs", endsPid)
		}
		return nil
	})
	if !alive(staysPid) {
		t.Fatalf("task process %d died with its agent", staysPid)
	}
	if tk, ok := c.WaitForLeader().View().Task(fw, "stays"); !ok || tk.State != protocol.TaskRunning {
		t.Fatalf("master holds %+v while the agent is down, want stays RUNNING", tk)
	}
	e.Start()
	// Stopped again at once: the final status of "ends" may be in flight.
	e.Stop()
	e.Start()

	if e.ID() != id {
		t.Fatalf("restarted agent has ID %s, want %s", e.ID(), id)
	}
	v := c.WaitForLeader().View()
	if n := len(v.Agents()); n != 1 {
		t.Fatalf("the master knows %d agents, want 1: the agent must reregister, not register anew", n)
	}
	if ag, _ := v.Agent(id); ag.State != "active" || ag.UpdatedAt <= before.UpdatedAt {
		t.Fatalf("agent in the master: %+v, want active and reregistered after %d", ag, before.UpdatedAt)
	}
	ts := waitAgentTask(t, e, fw, "stays", protocol.TaskRunning)
	if ts.Sandbox != stays || taskPid(t, e, stays) != staysPid || !alive(staysPid) {
		t.Fatalf("after the restarts stays runs in %q as pid %d (alive %v), want %q, pid %d",
			ts.Sandbox, taskPid(t, e, stays), alive(staysPid), stays, staysPid)
	}
	if tk, ok := c.WaitForLeader().View().Task(fw, "stays"); !ok || tk.State != protocol.TaskRunning {
		t.Fatalf("master holds %+v after the restarts, want stays RUNNING", tk)
	}
	f.rec.WaitState(t, "ends", protocol.TaskFinished)
	if out := readSandbox(t, e, ends, "stdout"); out != "done\n" {
		t.Errorf("stdout of ends: %q, want %q", out, "done\n")
	}
	touchIn(t, e, stays, "go")
	f.rec.WaitState(t, "stays", protocol.TaskFinished)

	// Acknowledged: the leader forgets both terminal tasks, and the agent
	// has nothing left to send.
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		v := c.WaitForLeader().View()
		for _, task := range []protocol.TaskID{"stays", "ends"} {
			if tk, ok := v.Task(fw, task); ok {
				return fmt.Errorf("leader still holds %s: %s acked=%v", task, tk.State, tk.Acked)
			}
			if ts, ok := agentTask(e, fw, task); ok && ts.PendingUpdates > 0 {
				return fmt.Errorf("agent has %d updates of %s pending", ts.PendingUpdates, task)
			}
		}
		return nil
	})
	for _, task := range []protocol.TaskID{"stays", "ends"} {
		sts := f.rec.Statuses(task)
		for _, st := range []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished} {
			n, deliveries := sdktest.CountUpdates(sts, st)
			if n != 1 || st == protocol.TaskFinished && deliveries != 1 {
				t.Errorf("%s: %s came as %d updates in %d deliveries, want one (statuses %s)",
					task, st, n, deliveries, sdktest.DescribeStatuses(sts))
			}
		}
		for _, st := range sts {
			if st.State == protocol.TaskLost || st.State == protocol.TaskFailed {
				t.Errorf("%s: got %s (%s)", task, st.State, st.Reason)
			}
		}
	}
}
