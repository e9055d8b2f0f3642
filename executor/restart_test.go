//go:build linux

package executor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// exitRecorded waits until a task's shim recorded its exit.
func exitRecorded(t *testing.T, a *Agent, sandbox string) {
	t.Helper()
	waitFileExists(t, filepath.Join(a.WorkDir(), controlDir, sandbox, "exit.json"))
}

// killShim kills a task's shim with SIGKILL.
func killShim(t *testing.T, a *Agent, sandbox string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(a.WorkDir(), controlDir, sandbox, "shim.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		ShimPid int `json:"shim_pid"`
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.ShimPid <= 0 {
		t.Fatalf("shim record %q: %v", data, err)
	}
	if err := syscall.Kill(rec.ShimPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// checkOnce fails unless the task's statuses hold exactly one update
// (UUID) of each of the states, and the final state exactly one delivery.
// Earlier states may be delivered twice with one UUID: the test framework
// subscribes again after the first leader announcement it sees, and the
// master then resends the statuses it has not acknowledged yet.
func checkOnce(t *testing.T, f *testcluster.TestFramework, id string, sts ...protocol.TaskState) {
	t.Helper()
	all := f.Statuses(protocol.TaskID(id))
	for i, st := range sts {
		updates, deliveries := countState(all, st)
		if updates != 1 || i == len(sts)-1 && deliveries != 1 {
			t.Errorf("task %s: %s came as %d updates in %d deliveries (statuses %v)", id, st, updates, deliveries, states(all))
		}
	}
}

func TestAgent_RestartKeepsTasks(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	p1 := startAgent(t, cfg)
	id := p1.ID()
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	launch(t, f, id, shellTask("stays", waitScript), shellTask("ends", waitScript), shellTask("orphan", "exec sleep 60"))
	for _, task := range []string{"stays", "ends", "orphan"} {
		waitState(t, f, task, protocol.TaskRunning)
	}
	stays, ends := sandboxOf(t, p1, f.ID(), "stays"), sandboxOf(t, p1, f.ID(), "ends")
	orphan := sandboxOf(t, p1, f.ID(), "orphan")

	p1.stop(t)
	touch(t, p1.Agent, ends, "go") // "ends" finishes while the agent is down
	exitRecorded(t, p1.Agent, ends)
	killShim(t, p1.Agent, orphan) // "orphan" loses its supervisor

	p2 := startAgent(t, cfg)
	if p2.ID() != id {
		t.Fatalf("restarted agent has id %s, want %s", p2.ID(), id)
	}
	if n := len(c.WaitForLeader().View().Agents()); n != 1 {
		t.Fatalf("the master knows %d agents, want 1: the restarted agent must reregister", n)
	}
	waitState(t, f, "ends", protocol.TaskFinished)
	if _, body := readFile(t, p2, ends+"/stdout", p2.FilesToken()); body != "started\ndone\n" {
		t.Fatalf("stdout of the task that ended while the agent was down: %q", body)
	}
	if st := waitState(t, f, "orphan", protocol.TaskFailed); st.Reason != protocol.ReasonExecutorTerminated {
		t.Fatalf("task whose shim died: got %+v, want executor_terminated", st)
	}
	waitAgentTask(t, p2.Agent, f.ID(), "stays", protocol.TaskRunning)
	touch(t, p2.Agent, stays, "go")
	waitState(t, f, "stays", protocol.TaskFinished)
	for _, task := range []string{"stays", "ends"} {
		checkOnce(t, f, task, protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished)
	}
	if ag, ok := c.WaitForLeader().View().Agent(id); !ok || ag.State != "active" {
		t.Fatalf("agent in the master: %+v, want active", ag)
	}
}

// TestAgent_RestartReportsEndOnce restarts the agent twice where no
// master answers it (another subject prefix), so the final status of a
// task that ended while it was down stays queued; then once more in the
// cluster.
func TestAgent_RestartReportsEndOnce(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	p1 := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	launch(t, f, p1.ID(), shellTask("task", waitScript))
	waitState(t, f, "task", protocol.TaskRunning)
	sandbox := sandboxOf(t, p1, f.ID(), "task")
	p1.stop(t)
	touch(t, p1.Agent, sandbox, "go")
	exitRecorded(t, p1.Agent, sandbox)

	isolated := cfg
	isolated.SubjectPrefix = "nobody"
	var pending int
	for i := range 2 {
		p := runAgent(t, isolated)
		testutilWaitFor(t, func() error {
			ts, ok := agentTask(p.Agent, f.ID(), "task")
			if !ok || ts.State != protocol.TaskFinished {
				return fmt.Errorf("run %d: task on the agent: %+v, want FINISHED", i, ts)
			}
			pending = ts.PendingUpdates
			return nil
		})
		if i == 0 && pending < 1 {
			t.Fatalf("run %d: %d updates pending, want the final one at least", i, pending)
		}
		p.stop(t)
		if i == 1 {
			ts, _ := agentTask(p.Agent, f.ID(), "task")
			if ts.PendingUpdates != pending {
				t.Fatalf("second restart: %d updates pending, the first had %d: the final status was queued again", ts.PendingUpdates, pending)
			}
		}
	}

	startAgent(t, cfg)
	waitState(t, f, "task", protocol.TaskFinished)
	checkOnce(t, f, "task", protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished)
}

func TestAgent_LeaderFailover(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := startAgent(t, testConfig(t, c, t.TempDir()))
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	launch(t, f, a.ID(), shellTask("before", waitScript))
	waitState(t, f, "before", protocol.TaskRunning)

	c.KillLeader()
	c.WaitForLeader()
	touch(t, a.Agent, sandboxOf(t, a, f.ID(), "before"), "go")
	waitState(t, f, "before", protocol.TaskFinished)
	launch(t, f, a.ID(), shellTask("after", "echo after"))
	waitState(t, f, "after", protocol.TaskFinished)
	if ag, ok := c.WaitForLeader().View().Agent(a.ID()); !ok || ag.State != "active" {
		t.Fatalf("agent in the new leader: %+v, want active", ag)
	}
}

// TestAgent_UnreachableThenBack stops the agent until the master marks it
// unreachable and its task LOST; the restarted agent reregisters, and the
// task, which the master gave up on, is killed.
func TestAgent_UnreachableThenBack(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, AgentTimeout: 500 * time.Millisecond, OfferTimeout: 2 * time.Second})
	cfg := testConfig(t, c, t.TempDir())
	p1 := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	launch(t, f, p1.ID(), shellTask("long", "exec sleep 60"))
	waitState(t, f, "long", protocol.TaskRunning)
	p1.stop(t)
	waitState(t, f, "long", protocol.TaskLost)

	p2 := startAgent(t, cfg)
	if p2.ID() != p1.ID() {
		t.Fatalf("id %s after the restart, want %s", p2.ID(), p1.ID())
	}
	ts := waitAgentTask(t, p2.Agent, f.ID(), "long", protocol.TaskKilled)
	exitRecorded(t, p2.Agent, ts.Sandbox)
	if ag, ok := c.WaitForLeader().View().Agent(p2.ID()); !ok || ag.State != "active" {
		t.Fatalf("agent in the master: %+v, want active again", ag)
	}
	if got := uniqueStates(f.Statuses("long")); got[len(got)-1] != protocol.TaskLost {
		t.Fatalf("framework saw %v, want LOST last", got)
	}
}
