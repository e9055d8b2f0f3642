package state

import (
	"reflect"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestState_Apply_registerAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.must(CmdRegisterAgent, registerAgent("ag-1"))
	h.must(CmdRegisterAgent, registerAgent("ag-0"))
	a, ok := h.view().Agent("ag-1")
	if !ok {
		t.Fatal("agent missing")
	}
	if res.(*Agent) != a {
		t.Errorf("got result %v, want the stored agent", res)
	}
	want := Agent{
		ID: "ag-1", Hostname: "ag-1.example", HTTPAddr: "10.0.0.1:5051", Resources: agentRes,
		Attributes: protocol.Attributes{"rack": protocol.Text("r1")}, Version: "1.0",
		State: AgentActive, RegisteredAt: t0, UpdatedAt: t0,
	}
	if !reflect.DeepEqual(*a, want) {
		t.Errorf("got %+v, want %+v", *a, want)
	}
	var ids []protocol.AgentID
	for _, a := range h.view().Agents() {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []protocol.AgentID{"ag-0", "ag-1"}) {
		t.Errorf("got agents %v, want [ag-0 ag-1]", ids)
	}
}

func TestState_Apply_registerAgentErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	inv := protocol.ErrInvalidArgument
	with := func(f func(*RegisterAgent)) *RegisterAgent {
		c := registerAgent("ag-new")
		f(c)
		return c
	}
	runErrCases(t, h, []errCase{
		{"duplicate", CmdRegisterAgent, registerAgent("ag-1"), protocol.ErrDuplicate},
		{"bad id", CmdRegisterAgent, with(func(c *RegisterAgent) { c.AgentID = "a/b" }), inv},
		{"no hostname", CmdRegisterAgent, with(func(c *RegisterAgent) { c.Hostname = "" }), inv},
		{"bad resources", CmdRegisterAgent, with(func(c *RegisterAgent) {
			c.Resources = protocol.Scalars(map[string]int64{"cpus": -5})
		}), protocol.ErrInvalidResources},
		{"no time", CmdRegisterAgent, with(func(c *RegisterAgent) { c.Time = -1 }), inv},
	})
}

func TestState_Apply_setAgentState(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	steps := []struct {
		state      AgentState
		time       int64
		wantUnr    int64
		wantUpdate int64
	}{
		{AgentDraining, t0 + 1, 0, t0 + 1},
		{AgentUnreachable, t0 + 2, t0 + 2, t0 + 2},
		{AgentUnreachable, t0 + 3, t0 + 2, t0 + 2},
		{AgentActive, t0 + 4, 0, t0 + 4},
		{AgentUnreachable, t0 + 5, t0 + 5, t0 + 5},
		{AgentGone, t0 + 6, t0 + 5, t0 + 6},
		{AgentGone, t0 + 7, t0 + 5, t0 + 6},
	}
	for i, st := range steps {
		h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: st.state, Time: st.time})
		a, _ := h.view().Agent("ag-1")
		if a.State != st.state || a.UnreachableAt != st.wantUnr || a.UpdatedAt != st.wantUpdate {
			t.Errorf("step %d: got %s unreachable_at %d updated_at %d, want %s %d %d",
				i, a.State, a.UnreachableAt, a.UpdatedAt, st.state, st.wantUnr, st.wantUpdate)
		}
	}
	inv := protocol.ErrInvalidArgument
	runErrCases(t, h, []errCase{
		{"gone is final", CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: AgentActive, Time: t0}, ErrAgentGone},
		{"unknown agent", CmdSetAgentState, &SetAgentState{AgentID: "ag-x", State: AgentActive, Time: t0}, protocol.ErrUnknownAgent},
		{"unknown state", CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: "asleep", Time: t0}, inv},
		{"no time", CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: AgentDraining}, inv},
	})
}

// A drain's deadline is replicated with the drain: draining again replaces
// it (none lifts it), every other state clears it, a reregistering agent
// keeps it, and a bad one is refused and changes nothing.
func TestState_Apply_setAgentStateDrainDeadline(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	steps := []struct {
		name     string
		state    AgentState
		deadline int64
		want     int64
	}{
		{"drain with a deadline", AgentDraining, t0 + 1000, t0 + 1000},
		{"drain again, a later deadline", AgentDraining, t0 + 2000, t0 + 2000},
		{"drain again, none", AgentDraining, 0, 0},
		{"drain with a deadline again", AgentDraining, t0 + 3000, t0 + 3000},
		{"activate", AgentActive, 0, 0},
		{"drain, then unreachable", AgentDraining, t0 + 4000, t0 + 4000},
		{"unreachable", AgentUnreachable, 0, 0},
	}
	for i, st := range steps {
		res := h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: st.state, Time: t0 + int64(i) + 1, DrainDeadline: st.deadline})
		if a := res.(*Agent); a.State != st.state || a.DrainDeadline != st.want {
			t.Errorf("%s: got %s drain deadline %d, want %s %d", st.name, a.State, a.DrainDeadline, st.state, st.want)
		}
	}
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: AgentDraining, Time: t0 + 10, DrainDeadline: t0 + 5000})
	if res := h.must(CmdReregisterAgent, reregister("ag-2")).(ReregisterResult); res.Agent.DrainDeadline != t0+5000 {
		t.Errorf("reregistered: got drain deadline %d, want %d kept", res.Agent.DrainDeadline, t0+5000)
	}
	inv := protocol.ErrInvalidArgument
	runErrCases(t, h, []errCase{
		{"negative deadline", CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: AgentDraining, Time: t0 + 20, DrainDeadline: -1}, inv},
		{"deadline while active", CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: AgentActive, Time: t0 + 20, DrainDeadline: t0}, inv},
		{"deadline while unreachable", CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: AgentUnreachable, Time: t0 + 20, DrainDeadline: t0}, inv},
	})
}

func TestState_Apply_removeAgent(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	h.must(CmdLaunchTasks, launch("fw-1", "ag-2", "t3"))
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskFailed, "u1")))
	res := h.must(CmdRemoveAgent, &RemoveAgent{AgentID: "ag-1", Time: t0 + 50}).([]protocol.TaskStatus)
	if got, want := statusKeys(res), []string{"fw-1/t1:LOST"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if res[0].Reason != protocol.ReasonAgentRemoved || res[0].UUID == "" || res[0].AgentID != "ag-1" {
		t.Errorf("got status %+v, want reason agent_removed, a uuid and agent ag-1", res[0])
	}
	v := h.view()
	if _, ok := v.Agent("ag-1"); ok {
		t.Error("agent still present")
	}
	t1 := h.task("fw-1", "t1")
	if t1.State != protocol.TaskLost || t1.Acked || t1.StatusUUID != res[0].UUID || t1.UpdatedAt != t0+50 {
		t.Errorf("got t1 %s acked %v uuid %s updated %d, want LOST unacked %s %d",
			t1.State, t1.Acked, t1.StatusUUID, t1.UpdatedAt, res[0].UUID, t0+50)
	}
	if t2 := h.task("fw-1", "t2"); t2.State != protocol.TaskFailed || t2.StatusUUID != "u1" {
		t.Errorf("got t2 %s %s, want FAILED u1 untouched", t2.State, t2.StatusUUID)
	}
	if got := keys(v.TasksByAgent("ag-1")); len(got) != 2 {
		t.Errorf("got tasks on removed agent %v, want t1 and t2 kept until acknowledged", got)
	}
	runErrCases(t, h, []errCase{
		{"unknown", CmdRemoveAgent, &RemoveAgent{AgentID: "ag-1", Time: t0}, protocol.ErrUnknownAgent},
		{"no time", CmdRemoveAgent, &RemoveAgent{AgentID: "ag-2"}, protocol.ErrInvalidArgument},
	})
}

func TestState_Apply_markAgentTasks(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	h.must(CmdLaunchTasks, launch("fw-pa", "ag-1", "p1"))
	h.must(CmdLaunchTasks, launch("fw-1", "ag-2", "t3"))
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskFinished, "u1")))
	mark := &MarkAgentTasks{AgentID: "ag-1", State: protocol.TaskUnreachable,
		Reason: protocol.ReasonAgentUnreachable, Message: "heartbeat timeout", Time: t0 + 60}
	res := h.must(CmdMarkAgentTasks, mark).([]protocol.TaskStatus)
	want := []string{"fw-1/t1:LOST", "fw-pa/p1:UNREACHABLE"}
	if got := statusKeys(res); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, st := range res {
		task := h.task(st.FrameworkID, st.TaskID)
		if task.Reason != protocol.ReasonAgentUnreachable || task.Message != "heartbeat timeout" ||
			task.Acked || task.StatusUUID != st.UUID || st.Timestamp != t0+60 {
			t.Errorf("got task %+v, want reason, message, unacked, uuid %s", task, st.UUID)
		}
	}
	if res[0].UUID == res[1].UUID {
		t.Errorf("got equal generated uuids %s", res[0].UUID)
	}
	if got := h.task("fw-1", "t3").State; got != protocol.TaskStaging {
		t.Errorf("got task on other agent %s, want STAGING", got)
	}
	// Again: LOST is terminal and p1 is already UNREACHABLE.
	if res := h.must(CmdMarkAgentTasks, mark).([]protocol.TaskStatus); len(res) != 0 {
		t.Errorf("got %v on second mark, want nothing", statusKeys(res))
	}
	// Then LOST for all.
	mark.State = protocol.TaskLost
	if got := statusKeys(h.must(CmdMarkAgentTasks, mark).([]protocol.TaskStatus)); !slices.Equal(got, []string{"fw-pa/p1:LOST"}) {
		t.Errorf("got %v, want [fw-pa/p1:LOST]", got)
	}
	inv := protocol.ErrInvalidArgument
	runErrCases(t, h, []errCase{
		{"unknown agent", CmdMarkAgentTasks, &MarkAgentTasks{AgentID: "ag-x", State: protocol.TaskLost, Time: t0}, protocol.ErrUnknownAgent},
		{"running is not allowed", CmdMarkAgentTasks, &MarkAgentTasks{AgentID: "ag-1", State: protocol.TaskRunning, Time: t0}, inv},
		{"unknown state", CmdMarkAgentTasks, &MarkAgentTasks{AgentID: "ag-1", State: "NAPPING", Time: t0}, inv},
		{"no time", CmdMarkAgentTasks, &MarkAgentTasks{AgentID: "ag-1", State: protocol.TaskLost}, inv},
		{"long reason", CmdMarkAgentTasks, &MarkAgentTasks{AgentID: "ag-1", State: protocol.TaskLost, Time: t0,
			Reason: string(make([]byte, protocol.MaxNameLen+1))}, inv},
	})
}

// TestState_Apply_droppedForFramework checks that an agent's DROPPED
// reaches a partition-aware framework as DROPPED and any other as LOST,
// as Mesos tells frameworks that do not know DROPPED; other states pass
// as they are.
func TestState_Apply_droppedForFramework(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	h.must(CmdLaunchTasks, launch("fw-pa", "ag-1", "t1"))
	res := h.must(CmdUpdateTaskStatus, updates(
		update("fw-1", "t1", "ag-1", protocol.TaskDropped, "u1"),
		update("fw-pa", "t1", "ag-1", protocol.TaskDropped, "u2"),
		update("fw-1", "t2", "ag-1", protocol.TaskFailed, "u3"))).(UpdateResult)
	if got, want := statusKeys(res.Applied), []string{"fw-1/t1:LOST", "fw-pa/t1:DROPPED", "fw-1/t2:FAILED"}; !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
	if t1 := h.task("fw-1", "t1"); t1.State != protocol.TaskLost || t1.StatusUUID != "u1" {
		t.Errorf("fw-1/t1: %s %s, want LOST under the agent's update u1", t1.State, t1.StatusUUID)
	}
	if t1 := h.task("fw-pa", "t1"); t1.State != protocol.TaskDropped {
		t.Errorf("fw-pa/t1: %s, want DROPPED", t1.State)
	}
}
