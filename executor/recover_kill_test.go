//go:build linux

package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// editRecord changes the journal record of framework fw's task id in the
// stopped agent's work directory, as if the agent had gone down at
// another moment.
func editRecord(t *testing.T, workDir string, fw protocol.FrameworkID, id protocol.TaskID, edit func(*taskRecord)) {
	t.Helper()
	j, recs, err := openJournal(workDir, testlog.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	for _, rec := range recs {
		if rec.FrameworkID != fw || rec.Info.TaskID != id {
			continue
		}
		edit(&rec)
		e, err := putEntry(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.append([]journalEntry{e}); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no record of %s/%s", fw, id)
}

// TestAgent_RecoverKillRequested restarts an agent whose journal says a
// kill was requested before it went down, for a task that still runs, one
// that still runs but was never reported RUNNING (its launch was under
// way), and one whose process and supervisor vanished while the agent was
// down: each is reported KILLED, the two that run are killed, and none is
// reported RUNNING again.
//
// Mutants this catches (executor/recover.go): reattachLocked not killing a
// reattached task whose kill was requested ("running" never ends);
// recoverTasks reporting RUNNING for a launching task whose kill was
// requested (the restarted agent shows "launching" RUNNING while it dies;
// the framework never sees it, as the master already had it RUNNING, so
// the agent's own view is checked); a vanished task with a kill
// requested reported FAILED or DROPPED instead of KILLED ("vanished").
func TestAgent_RecoverKillRequested(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	p1 := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw"})
	ids := []string{"running", "launching", "vanished"}
	// "launching" takes a second to die, so that the agent reregisters
	// while it still runs: a RUNNING it wrongly queued would reach the
	// framework before the KILLED.
	launch(t, f, p1.ID(), shellTask(ids[0], waitScript), shellTask(ids[1], "trap 'sleep 1; exit 0' TERM; "+waitScript),
		shellTask(ids[2], "echo $$ > pid; exec sleep 600"))
	for _, id := range ids {
		waitState(t, f, id, protocol.TaskRunning)
	}
	vanished := sandboxOf(t, p1, f.ID(), "vanished")
	pidFile := filepath.Join(p1.Agent.SandboxRoot(), vanished, "pid")
	var pid int
	testutilWaitFor(t, func() error {
		data, err := os.ReadFile(pidFile)
		if err == nil {
			_, err = fmt.Sscan(string(data), &pid)
		}
		return err
	})
	p1.stop(t)

	// The agent went down after recording the kills: the tasks' processes
	// did not get them.
	for _, id := range ids {
		editRecord(t, cfg.WorkDir, f.ID(), protocol.TaskID(id), func(rec *taskRecord) {
			rec.KillRequested, rec.KillReason = true, protocol.ReasonKilledByFramework
			if id == "launching" {
				rec.State = protocol.TaskStarting
			}
		})
	}
	killShim(t, p1.Agent, vanished)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if err := os.RemoveAll(filepath.Join(p1.Agent.WorkDir(), controlDir, vanished)); err != nil {
		t.Fatal(err)
	}

	p2 := startAgent(t, cfg)
	// The agent's own view of "launching" while it dies: never RUNNING.
	testutilWaitFor(t, func() error {
		ts, ok := agentTask(p2.Agent, f.ID(), "launching")
		switch {
		case ok && ts.State == protocol.TaskRunning:
			t.Fatalf("launching: the restarted agent reports it RUNNING, though its kill was requested")
		case ok && !ts.State.Terminal():
			return fmt.Errorf("launching is %s", ts.State)
		}
		return nil
	})
	for _, id := range ids {
		st := waitState(t, f, id, protocol.TaskKilled)
		if id != "vanished" && st.Reason != protocol.ReasonKilledByFramework {
			t.Errorf("%s: KILLED with reason %q, want killed_by_framework", id, st.Reason)
		}
		if updates, _ := countState(f.Statuses(protocol.TaskID(id)), protocol.TaskRunning); updates != 1 {
			t.Errorf("%s: %d RUNNING updates, want the one before the restart (%v)", id, updates, states(f.Statuses(protocol.TaskID(id))))
		}
	}
}

// TestAgent_RecoverVanished restarts an agent after the processes and
// supervisors of two tasks vanished while it was down, with no kill
// requested: the one that was running ends FAILED executor_terminated; the
// one whose launch was under way never started, so it ends DROPPED
// agent_restarted, never FAILED.
//
// Mutants this catches (executor/recover.go reattachLocked): a vanished
// launching task reported FAILED (the DROPPED case skipped), and a
// vanished running task reported DROPPED (the launching check inverted).
func TestAgent_RecoverVanished(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	p1 := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw", Capabilities: []string{protocol.CapPartitionAware}})
	ids := []string{"was-running", "was-launching"}
	launch(t, f, p1.ID(), shellTask(ids[0], "echo $$ > pid; exec sleep 600"), shellTask(ids[1], "echo $$ > pid; exec sleep 600"))
	pids := map[string]int{}
	sandboxes := map[string]string{}
	for _, id := range ids {
		waitState(t, f, id, protocol.TaskRunning)
		sandboxes[id] = sandboxOf(t, p1, f.ID(), id)
		testutilWaitFor(t, func() error {
			data, err := os.ReadFile(filepath.Join(p1.Agent.SandboxRoot(), sandboxes[id], "pid"))
			if err == nil {
				var pid int
				_, err = fmt.Sscan(string(data), &pid)
				pids[id] = pid
			}
			return err
		})
	}
	p1.stop(t)
	editRecord(t, cfg.WorkDir, f.ID(), "was-launching", func(rec *taskRecord) { rec.State = protocol.TaskStarting })
	for _, id := range ids {
		killShim(t, p1.Agent, sandboxes[id])
		_ = syscall.Kill(pids[id], syscall.SIGKILL)
		if err := os.RemoveAll(filepath.Join(p1.Agent.WorkDir(), controlDir, sandboxes[id])); err != nil {
			t.Fatal(err)
		}
	}
	startAgent(t, cfg)
	if st := waitState(t, f, "was-running", protocol.TaskFailed); st.Reason != protocol.ReasonExecutorTerminated {
		t.Errorf("was-running: FAILED %q, want executor_terminated", st.Reason)
	}
	if st := waitState(t, f, "was-launching", protocol.TaskDropped); st.Reason != protocol.ReasonAgentRestarted {
		t.Errorf("was-launching: DROPPED %q, want agent_restarted", st.Reason)
	}
}

// TestAgent_RecoverGroupLaunchCut restarts an agent whose journal says a
// task group was still launching when it went down, one member of which
// left no trace: the group runs all or nothing, so the member still alive
// is killed, and both end DROPPED agent_restarted, the group never having
// started.
//
// Mutants this catches (executor/recover.go recoverTasks): the group not
// marked failed when a launching member is gone, or its live members not
// cut (the live member is reported RUNNING and runs on).
func TestAgent_RecoverGroupLaunchCut(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	p1 := startAgent(t, cfg)
	f := c.NewFramework(testcluster.FrameworkOptions{Name: "fw", Capabilities: []string{protocol.CapPartitionAware}})
	ids := []string{"m-gone", "m-alive"}
	launchGroup(t, c, f, p1.ID(), "g", shellTask(ids[0], "echo $$ > pid; exec sleep 600"), shellTask(ids[1], "exec sleep 600"))
	for _, id := range ids {
		waitState(t, f, id, protocol.TaskRunning)
	}
	gone := sandboxOf(t, p1, f.ID(), "m-gone")
	var pid int
	testutilWaitFor(t, func() error {
		data, err := os.ReadFile(filepath.Join(p1.Agent.SandboxRoot(), gone, "pid"))
		if err == nil {
			_, err = fmt.Sscan(string(data), &pid)
		}
		return err
	})
	p1.stop(t)
	for _, id := range ids {
		editRecord(t, cfg.WorkDir, f.ID(), protocol.TaskID(id), func(rec *taskRecord) { rec.State = protocol.TaskStarting })
	}
	killShim(t, p1.Agent, gone)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if err := os.RemoveAll(filepath.Join(p1.Agent.WorkDir(), controlDir, gone)); err != nil {
		t.Fatal(err)
	}
	startAgent(t, cfg)
	for _, id := range ids {
		if st := waitState(t, f, id, protocol.TaskDropped); st.Reason != protocol.ReasonAgentRestarted {
			t.Errorf("%s: DROPPED %q, want agent_restarted", id, st.Reason)
		}
	}
}
