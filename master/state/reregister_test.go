package state

import (
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func reported(fw protocol.FrameworkID, id protocol.TaskID, st protocol.TaskState, uuid protocol.StatusUUID) protocol.TaskStatus {
	return protocol.TaskStatus{TaskID: id, FrameworkID: fw, State: st, Timestamp: t0 + 70, UUID: uuid}
}

func reregister(ag protocol.AgentID, tasks ...protocol.TaskStatus) *ReregisterAgent {
	r := registerAgent(ag)
	return &ReregisterAgent{
		AgentID: ag, Hostname: "new-" + r.Hostname, HTTPAddr: "10.0.0.9:5051", Resources: r.Resources,
		Version: "2.0", Tasks: tasks, Time: t0 + 80,
	}
}

func TestState_Apply_reregisterAgentReconcile(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "run", "same", "gone", "staged", "lost", "done", "term", "ahead"))
	h.must(CmdLaunchTasks, launch("fw-1", "ag-2", "elsewhere"))
	h.must(CmdUpdateTaskStatus, updates(
		update("fw-1", "run", "ag-1", protocol.TaskStarting, "u1"),
		update("fw-1", "same", "ag-1", protocol.TaskRunning, "u2"),
		update("fw-1", "gone", "ag-1", protocol.TaskRunning, "u3"),
		update("fw-1", "lost", "ag-1", protocol.TaskLost, "u4"),
		update("fw-1", "done", "ag-1", protocol.TaskFinished, "u5"),
		update("fw-1", "term", "ag-1", protocol.TaskRunning, "u6"),
		update("fw-1", "ahead", "ag-1", protocol.TaskRunning, "u7"),
	))
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: AgentUnreachable, Time: t0 + 40})
	res := h.must(CmdReregisterAgent, reregister("ag-1",
		reported("fw-1", "run", protocol.TaskRunning, "a1"),             // changed: the report becomes the latest status
		reported("fw-1", "same", protocol.TaskRunning, ""),              // unchanged
		reported("fw-1", "lost", protocol.TaskRunning, ""),              // master says LOST: orphan
		reported("fw-1", "done", protocol.TaskFinished, "u5"),           // terminal on both sides
		reported("fw-1", "term", protocol.TaskFailed, ""),               // agent reports terminal
		reported("fw-1", "unknown", protocol.TaskRunning, ""),           // unknown task: orphan
		reported("fw-1", "finished-unknown", protocol.TaskFinished, ""), // unknown, terminal: ignored
		reported("fw-x", "t", protocol.TaskRunning, ""),                 // unknown framework: orphan
		reported("fw-1", "elsewhere", protocol.TaskRunning, ""),         // on ag-2: orphan
		reported("fw-1", "ahead", protocol.TaskStarting, "old"),         // behind the master's RUNNING: kept
	)).(ReregisterResult)

	wantChanged := []string{"fw-1/gone:LOST", "fw-1/run:RUNNING", "fw-1/term:FAILED"}
	if got := statusKeys(res.Changed); !slices.Equal(got, wantChanged) {
		t.Errorf("got changed %v, want %v", got, wantChanged)
	}
	if len(res.Relaunch) != 1 || res.Relaunch[0].ID != "staged" {
		t.Errorf("got relaunch %+v, want the staged task", res.Relaunch)
	}
	if task := h.task("fw-1", "staged"); task.State != protocol.TaskStaging || task.StatusUUID != "" {
		t.Errorf("staged task: got %s uuid %q, want still STAGING with no status", task.State, task.StatusUUID)
	}
	wantOrphans := []string{"fw-1/elsewhere:RUNNING", "fw-1/lost:RUNNING", "fw-1/unknown:RUNNING", "fw-x/t:RUNNING"}
	if got := statusKeys(res.Orphans); !slices.Equal(got, wantOrphans) {
		t.Errorf("got orphans %v, want %v", got, wantOrphans)
	}
	for _, o := range res.Orphans {
		if o.AgentID != "ag-1" {
			t.Errorf("got orphan %s/%s on agent %q, want ag-1", o.FrameworkID, o.TaskID, o.AgentID)
		}
	}
	checks := []struct {
		id     protocol.TaskID
		state  protocol.TaskState
		reason string
		uuid   protocol.StatusUUID // "" means generated
		acked  bool
	}{
		{"run", protocol.TaskRunning, "", "a1", false},
		{"same", protocol.TaskRunning, "", "u2", false},
		{"gone", protocol.TaskLost, protocol.ReasonAgentRestarted, "", false},
		{"lost", protocol.TaskLost, "", "u4", false},
		{"term", protocol.TaskFailed, "", "", false},
		{"ahead", protocol.TaskRunning, "", "u7", false},
	}
	for _, c := range checks {
		task := h.task("fw-1", c.id)
		if task.State != c.state || task.Reason != c.reason || task.Acked != c.acked {
			t.Errorf("task %s: got %s %q acked %v, want %s %q %v", c.id, task.State, task.Reason, task.Acked, c.state, c.reason, c.acked)
		}
		if c.uuid != "" && task.StatusUUID != c.uuid || c.uuid == "" && task.StatusUUID == "" {
			t.Errorf("task %s: got uuid %q, want %q (empty: generated)", c.id, task.StatusUUID, c.uuid)
		}
	}
	if _, ok := h.view().Task("fw-1", "unknown"); ok {
		t.Error("unknown task was adopted, want it reported as an orphan only")
	}
	a := res.Agent
	if a.State != AgentActive || a.UnreachableAt != 0 || a.Hostname != "new-ag-1.example" || a.Version != "2.0" ||
		a.UpdatedAt != t0+80 || a.RegisteredAt != t0 {
		t.Errorf("got agent %+v, want active, unreachable_at 0, new hostname and version", a)
	}
}

func TestState_Apply_reregisterAgentDraining(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: AgentDraining, Time: t0 + 1})
	res := h.must(CmdReregisterAgent, reregister("ag-1")).(ReregisterResult)
	if res.Agent.State != AgentDraining {
		t.Errorf("got %s, want draining kept", res.Agent.State)
	}
}

func TestState_Apply_reregisterAgentErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdRegisterAgent, registerAgent("ag-gone"))
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-gone", State: AgentGone, Time: t0 + 1})
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	inv := protocol.ErrInvalidArgument
	other := reported("fw-1", "t1", protocol.TaskRunning, "")
	other.AgentID = "ag-2"
	noHost := reregister("ag-1")
	noHost.Hostname = ""
	noTime := reregister("ag-1")
	noTime.Time = 0
	badStatus := reported("fw-1", "t1", "SLEEPING", "")
	runErrCases(t, h, []errCase{
		{"unknown", CmdReregisterAgent, reregister("ag-x"), protocol.ErrUnknownAgent},
		{"gone", CmdReregisterAgent, reregister("ag-gone"), ErrAgentGone},
		{"gone matches unknown agent", CmdReregisterAgent, reregister("ag-gone"), protocol.ErrUnknownAgent},
		{"reported twice", CmdReregisterAgent, reregister("ag-1",
			reported("fw-1", "t1", protocol.TaskRunning, ""), reported("fw-1", "t1", protocol.TaskRunning, "")), protocol.ErrDuplicate},
		{"status names another agent", CmdReregisterAgent, reregister("ag-1", other), inv},
		{"invalid status", CmdReregisterAgent, reregister("ag-1", badStatus), inv},
		{"no hostname", CmdReregisterAgent, noHost, inv},
		{"no time", CmdReregisterAgent, noTime, inv},
	})
}

// TestState_Apply_reregisterDropped checks that a task an agent reports
// DROPPED on reregistering reaches a framework that is not partition
// aware as LOST, and a partition-aware one as DROPPED.
func TestState_Apply_reregisterDropped(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	h.must(CmdLaunchTasks, launch("fw-pa", "ag-1", "t1"))
	rr := reregister("ag-1")
	for _, fw := range []protocol.FrameworkID{"fw-1", "fw-pa"} {
		rr.Tasks = append(rr.Tasks, protocol.TaskStatus{TaskID: "t1", FrameworkID: fw, AgentID: "ag-1",
			State: protocol.TaskDropped, Reason: protocol.ReasonAgentRestarted, UUID: protocol.StatusUUID("u-" + fw), Timestamp: t0})
	}
	h.must(CmdReregisterAgent, rr)
	if got := h.task("fw-1", "t1"); got.State != protocol.TaskLost || got.Status.Reason != protocol.ReasonAgentRestarted {
		t.Errorf("fw-1/t1: %s (%s), want LOST (agent_restarted)", got.State, got.Status.Reason)
	}
	if got := h.task("fw-pa", "t1"); got.State != protocol.TaskDropped {
		t.Errorf("fw-pa/t1: %s, want DROPPED", got.State)
	}
}

// TestState_Apply_reregisterReportsFirstStatus: a task the master knows
// only as launched (STAGING, no status yet) that the agent reports
// RUNNING, with no status UUID of its own, takes the report as its first
// status. It fails with a report without UUID matched against a task
// without one as the same status.
func TestState_Apply_reregisterReportsFirstStatus(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "fresh"))
	res := h.must(CmdReregisterAgent, reregister("ag-1", reported("fw-1", "fresh", protocol.TaskRunning, ""))).(ReregisterResult)
	if got := statusKeys(res.Changed); !slices.Equal(got, []string{"fw-1/fresh:RUNNING"}) {
		t.Errorf("changed %v, want fw-1/fresh:RUNNING", got)
	}
	if task := h.task("fw-1", "fresh"); task.State != protocol.TaskRunning || task.StatusUUID == "" {
		t.Errorf("task: %s uuid %q, want RUNNING with a status", task.State, task.StatusUUID)
	}
}
