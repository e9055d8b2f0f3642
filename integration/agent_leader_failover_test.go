package integration

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestAgent_LeaderKilledWhileTasksRun kills the master leader while a
// real agent runs an SDK framework's tasks. The driver subscribes again by
// itself and reconciles; the agent carries on with the new leader, whose
// later statuses reach the framework; no task is lost or started twice.
func TestAgent_LeaderKilledWhileTasksRun(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	e := executors.New(t, c, executors.Options{})
	f := startSDK(t, c, framework.WithName("failover"), framework.WithFailoverTimeout(time.Minute))
	fw := f.d.ID()
	before := []protocol.TaskID{"t0", "t1", "t2"}
	var tasks []protocol.TaskInfo
	for _, id := range before {
		tasks = append(tasks, shTask(string(id), waitForGo))
	}
	f.launch(t, e.ID(), tasks...)
	sandboxes := map[protocol.TaskID]string{}
	for _, id := range before {
		f.rec.WaitState(t, id, protocol.TaskRunning)
		sandboxes[id] = sandboxOf(t, e, fw, id)
	}

	old := c.KillLeader()
	leader := c.WaitForLeader()
	t.Logf("killed leader %s; %s leads", c.NodeID(old), leader.ID())
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		if f.rec.Disconnects() == 0 || f.rec.Reregistrations() == 0 {
			return fmt.Errorf("disconnected %d times, reregistered %d times", f.rec.Disconnects(), f.rec.Reregistrations())
		}
		return nil
	})
	for _, id := range before {
		f.rec.WaitStatus(t, id, "RUNNING from reconciliation", func(st sdktest.Arrival) bool {
			return st.State == protocol.TaskRunning && st.Reason == protocol.ReasonReconciliation && st.UUID == ""
		})
	}
	// The tasks end under the new leader, and a new task runs.
	for _, id := range before {
		touchIn(t, e, sandboxes[id], "go")
	}
	f.launch(t, e.ID(), shTask("after", "echo after"))
	all := append(slices.Clone(before), "after")
	for _, id := range all {
		f.rec.WaitState(t, id, protocol.TaskFinished)
	}
	if out := readSandbox(t, e, sandboxOf(t, e, fw, "after"), "stdout"); out != "after\n" {
		t.Errorf("stdout of after: %q", out)
	}
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader serves")
		}
		if ag, ok := l.View().Agent(e.ID()); !ok || ag.State != "active" {
			return fmt.Errorf("agent in the new leader: %+v", ag)
		}
		if n := len(l.View().TasksByFramework(fw)); n > 0 {
			return fmt.Errorf("leader still holds %d tasks: not all final statuses were acknowledged", n)
		}
		return nil
	})

	// Nothing lost, nothing started twice: one start of each task (the
	// same update may come twice, two different starts may not), each
	// known once to the agent, with one sandbox. (An accept on an offer
	// the leader change voided is refused with an ERROR that carries no
	// UUID; the task is then launched on a fresh offer.)
	for _, id := range all {
		sts := f.rec.Statuses(id)
		for _, st := range sts {
			switch {
			case st.State == protocol.TaskLost || st.State == protocol.TaskUnreachable || st.State == protocol.TaskDropped,
				st.UUID != "" && st.State != protocol.TaskStarting && st.State != protocol.TaskRunning &&
					st.State != protocol.TaskFinished:
				t.Errorf("%s: got %s (%s)", id, st.State, st.Reason)
			}
		}
		for _, st := range []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished} {
			if n, _ := sdktest.CountUpdates(sts, st); n != 1 {
				t.Errorf("%s: %d distinct %s updates, want 1 (statuses %s)", id, n, st, sdktest.DescribeStatuses(sts))
			}
		}
	}
	checkKnownOnce(t, e, fw, all)
	if errs := f.rec.Errors(); len(errs) > 0 {
		t.Errorf("scheduler errors: %v", errs)
	}
}

// checkKnownOnce checks that agent e lists each task of all, framework
// fw's, exactly once, and holds one sandbox for each.
func checkKnownOnce(t *testing.T, e *executors.Executor, fw protocol.FrameworkID, all []protocol.TaskID) {
	t.Helper()
	seen := map[protocol.TaskID]int{}
	for _, ts := range e.Agent().State().Tasks {
		if ts.FrameworkID == fw {
			seen[ts.TaskID]++
		}
	}
	entries, err := os.ReadDir(e.Agent().SandboxRoot())
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, ent := range entries {
		if strings.HasPrefix(ent.Name(), string(fw)) {
			dirs++
		}
	}
	for _, id := range all {
		if seen[id] != 1 {
			t.Errorf("the agent lists %s %d times", id, seen[id])
		}
	}
	if len(seen) != len(all) || dirs != len(all) {
		t.Errorf("the agent lists %d tasks in %d sandboxes, want %d of each", len(seen), dirs, len(all))
	}
}
