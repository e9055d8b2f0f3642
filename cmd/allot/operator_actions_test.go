package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
)

// The operator's actions from the command line against a running trio:
// bad flags fail before any master is asked; tasks kill ends a task KILLED
// (killed_by_operator); agents drain --deadline --wait returns once the
// deadline killed the rest (agent_drained); frameworks teardown removes the
// framework. Each failure is one line.
func TestOperatorActionCommands(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1, Configure: func(_ int, cfg *master.Config) {
		cfg.OperatorToken = "op"
	}})
	masters := "--masters=" + strings.Join(c.HTTPAddrs(), ",")
	unit := protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 64})
	fw := c.NewFramework(testcluster.FrameworkOptions{
		Role: "eng", Demand: []protocol.TaskShape{{Resources: unit, Count: 2}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unit, Behaviour: testcluster.RunUntilKilled(), Max: 2},
	})
	agent := c.Agents()[0].ID()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		n := 0
		for _, ft := range fw.Tasks() {
			if ft.Seen(protocol.TaskRunning) {
				n++
			}
		}
		if n != 2 {
			return fmt.Errorf("%d tasks running, want 2", n)
		}
		return nil
	})
	tasks := fw.Tasks()
	first, second := string(tasks[0].Info.TaskID), string(tasks[1].Info.TaskID)
	id := string(fw.ID())

	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runAllot(t, "", append(args, masters)...)
		if code != 0 {
			t.Fatalf("allot %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"negative grace", []string{"tasks", "kill", id, first, "--grace=-1s", "--token=op"}, "--grace -1s: want a duration that is not negative"},
		{"bad grace", []string{"tasks", "kill", id, first, "--grace=soon", "--token=op"}, `invalid argument "soon" for "--grace"`},
		{"kill needs two ids", []string{"tasks", "kill", id, "--token=op"}, "accepts 2 arg(s), received 1"},
		{"negative deadline", []string{"agents", "drain", string(agent), "--deadline=-1m", "--token=op"}, "--deadline -1m0s: want a duration that is not negative"},
		{"bad deadline", []string{"agents", "drain", string(agent), "--deadline=later", "--token=op"}, `invalid argument "later" for "--deadline"`},
		{"no token", []string{"tasks", "kill", id, first}, "needs the operator token"},
		{"unknown framework", []string{"tasks", "kill", "fw-NOSUCH", first, "--token=op"}, "404 Not Found"},
		{"unknown task", []string{"tasks", "kill", id, "no-such-task", "--token=op"}, "404 Not Found"},
		{"teardown unknown", []string{"frameworks", "teardown", "fw-NOSUCH", "--token=op"}, "404 Not Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runAllot(t, "", append(tc.args, masters)...)
			if code == 0 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want a one-line failure containing %q", code, errOut, tc.want)
			}
		})
	}
	if a, _ := c.WaitForLeader().View().Agent(agent); a.State != "active" {
		t.Fatalf("agent after refused drains: %s, want active", a.State)
	}

	if out := run("tasks", "kill", id, first, "--grace=2s", "--token=op"); out != fmt.Sprintf("task %s/%s on agent %s is being killed (killed_by_operator)\n", id, first, agent) {
		t.Fatalf("tasks kill: %q", out)
	}
	waitKilled(t, fw, protocol.TaskID(first), protocol.ReasonKilledByOperator)

	out := run("agents", "drain", string(agent), "--deadline=1s", "--wait", "--token=op")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "agent "+string(agent)+" is draining; the tasks still on it are killed at ") ||
		lines[1] != "agent "+string(agent)+" is drained: it runs no task" {
		t.Fatalf("agents drain --wait: %q", out)
	}
	waitKilled(t, fw, protocol.TaskID(second), protocol.ReasonAgentDrained)
	if out := run("agents", "list"); !strings.Contains(out, "draining (drained)") {
		t.Fatalf("agents list: %q lacks the drained agent", out)
	}

	if out := run("frameworks", "teardown", id, "--token=op"); out != "framework "+id+" is removed\n" {
		t.Fatalf("frameworks teardown: %q", out)
	}
	if _, ok := c.WaitForLeader().View().Framework(fw.ID()); ok {
		t.Fatal("the framework is still registered")
	}
}

// waitKilled waits until task id's latest status at fw is KILLED with
// reason.
func waitKilled(t *testing.T, fw *testcluster.TestFramework, id protocol.TaskID, reason string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		sts := fw.Statuses(id)
		if len(sts) == 0 || sts[len(sts)-1].State != protocol.TaskKilled || sts[len(sts)-1].Reason != reason {
			return fmt.Errorf("task %s: statuses %v, want KILLED (%s) last", id, sts, reason)
		}
		return nil
	})
}

// describeEvent renders operator actions and preemption steps.
func TestDescribeEvent_operatorAndPreemption(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ev   protocol.ClusterEvent
		want string
	}{
		{"kill", protocol.ClusterEvent{Operator: &protocol.OperatorAction{Action: protocol.OperatorKillTask, FrameworkID: "fw-1", TaskID: "t1", AgentID: "ag-1", Detail: "forced"}},
			"2026-11-27T10:00:00Z operator kill_task fw-1 t1 ag-1 (forced)"},
		{"drain", protocol.ClusterEvent{Operator: &protocol.OperatorAction{Action: protocol.OperatorDrainAgent, AgentID: "ag-1"}},
			"2026-11-27T10:00:00Z operator drain_agent ag-1"},
		{"warned", protocol.ClusterEvent{Preemption: &protocol.PreemptionChange{FrameworkID: "fw-1", TaskID: "t1", AgentID: "ag-1",
			Reason: protocol.ReasonAgentDrained, State: protocol.PreemptionWarned, Deadline: at.Add(time.Minute).UnixNano()}},
			"2026-11-27T10:00:00Z task fw-1/t1 on ag-1 warned (agent_drained), deadline 2026-11-27T10:01:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ev.Time = at.UnixNano()
			if got := describeEvent(tc.ev); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
