package state

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestState_Apply_launchTasks(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	c := launch("fw-1", "ag-1", "t2", "t1")
	c.Tasks[1].Kind = protocol.OfferLeftover
	res := h.must(CmdLaunchTasks, c).([]*Task)
	if got := keys(res); !slices.Equal(got, []TaskKey{{"fw-1", "t2"}, {"fw-1", "t1"}}) {
		t.Errorf("got result %v, want batch order", got)
	}
	t1 := h.task("fw-1", "t1")
	if t1 != res[1] {
		t.Error("result is not the stored task")
	}
	want := protocol.TaskStatus{TaskID: "t1", FrameworkID: "fw-1", AgentID: "ag-1", State: protocol.TaskStaging, Timestamp: t0 + 10}
	if t1.State != protocol.TaskStaging || t1.Status != want || !t1.Acked || t1.StatusUUID != "" ||
		t1.LaunchedAt != t0+10 || t1.UpdatedAt != t0+10 || t1.AgentID != "ag-1" {
		t.Errorf("got %+v, want STAGING, acked, no uuid, launched at t0+10", t1)
	}
	if t1.Kind != protocol.OfferLeftover || h.task("fw-1", "t2").Kind != protocol.OfferFair ||
		h.task("fw-1", "t2").Info.Kind != protocol.OfferFair {
		t.Errorf("got kinds %s and %s, want leftover and fair (defaulted)", t1.Kind, h.task("fw-1", "t2").Kind)
	}
	if got := keys(h.view().TasksByAgent("ag-1")); !slices.Equal(got, []TaskKey{{"fw-1", "t1"}, {"fw-1", "t2"}}) {
		t.Errorf("got tasks by agent %v, want sorted t1, t2", got)
	}
	if got := h.view().UnackedTasks("fw-1"); len(got) != 0 {
		t.Errorf("got unacked %v, want none: STAGING needs no ack", keys(got))
	}
	// The same task ID in another framework is another task.
	h.must(CmdLaunchTasks, launch("fw-pa", "ag-1", "t1"))
	if got := h.view().NumTasks(); got != 3 {
		t.Errorf("got %d tasks, want 3", got)
	}
}

func TestState_Apply_launchTasksErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	h.must(CmdRegisterAgent, registerAgent("ag-drain"))
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-drain", State: AgentDraining, Time: t0})
	inv := protocol.ErrInvalidArgument
	wrongAgent := launch("fw-1", "ag-1", "t9")
	wrongAgent.Tasks[0].AgentID = "ag-2"
	noRes := launch("fw-1", "ag-1", "t9")
	noRes.Tasks[0].Resources = protocol.Resources{}
	noTime := launch("fw-1", "ag-1", "t9")
	noTime.Time = 0
	runErrCases(t, h, []errCase{
		{"unknown framework", CmdLaunchTasks, launch("fw-x", "ag-1", "t9"), protocol.ErrUnknownFramework},
		{"unknown agent", CmdLaunchTasks, launch("fw-1", "ag-x", "t9"), protocol.ErrUnknownAgent},
		{"draining agent", CmdLaunchTasks, launch("fw-1", "ag-drain", "t9"), ErrAgentNotActive},
		{"existing task", CmdLaunchTasks, launch("fw-1", "ag-1", "t9", "t1"), protocol.ErrDuplicate},
		{"duplicate in batch", CmdLaunchTasks, launch("fw-1", "ag-1", "t9", "t9"), protocol.ErrDuplicate},
		{"empty batch", CmdLaunchTasks, launch("fw-1", "ag-1"), inv},
		{"task on another agent", CmdLaunchTasks, wrongAgent, inv},
		{"task without resources", CmdLaunchTasks, noRes, protocol.ErrInvalidResources},
		{"bad task id", CmdLaunchTasks, launch("fw-1", "ag-1", "a b"), inv},
		{"no time", CmdLaunchTasks, noTime, inv},
	})
}

func TestState_Apply_updateTaskStatus(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	res := h.must(CmdUpdateTaskStatus, updates(
		update("fw-1", "t1", "ag-1", protocol.TaskStarting, "u1"),
		update("fw-1", "t1", "", protocol.TaskRunning, "u2"), // latest wins
		update("fw-1", "t2", "ag-1", protocol.TaskRunning, "u3"),
		update("fw-1", "nope", "ag-1", protocol.TaskRunning, "u4"),
		update("fw-x", "t1", "ag-1", protocol.TaskRunning, "u5"),
		update("fw-1", "t2", "ag-2", protocol.TaskRunning, "u6"),
		update("fw-1", "t2", "ag-1", protocol.TaskRunning, "u3"), // duplicate delivery
	)).(UpdateResult)
	if got, want := statusKeys(res.Applied), []string{"fw-1/t1:STARTING", "fw-1/t1:RUNNING", "fw-1/t2:RUNNING"}; !slices.Equal(got, want) {
		t.Errorf("got applied %v, want %v", got, want)
	}
	if !slices.Equal(res.Duplicates, []protocol.StatusUUID{"u3"}) {
		t.Errorf("got duplicates %v, want [u3]", res.Duplicates)
	}
	wantErrs := []struct {
		index int
		err   error
	}{{3, protocol.ErrUnknownTask}, {4, protocol.ErrUnknownFramework}, {5, protocol.ErrInvalidArgument}}
	if len(res.Errors) != len(wantErrs) {
		t.Fatalf("got errors %v, want %d", res.Errors, len(wantErrs))
	}
	for i, w := range wantErrs {
		if e := res.Errors[i]; e.Index != w.index || !errors.Is(e, w.err) {
			t.Errorf("errors[%d]: got %d %v, want %d %v", i, e.Index, e.Err, w.index, w.err)
		}
	}
	t1 := h.task("fw-1", "t1")
	if t1.State != protocol.TaskRunning || t1.StatusUUID != "u2" || t1.Status.UUID != "u2" || t1.Acked ||
		t1.Status.AgentID != "ag-1" || t1.UpdatedAt != t0+30 || t1.Status.Timestamp != t0+20 {
		t.Errorf("got %+v, want RUNNING u2 unacked on ag-1", t1)
	}
}

func TestState_Apply_updateTaskStatusErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	inv := protocol.ErrInvalidArgument
	noTime := updates(update("fw-1", "t1", "ag-1", protocol.TaskRunning, "u1"))
	noTime.Time = 0
	mismatch := update("fw-1", "t1", "ag-1", protocol.TaskRunning, "u1")
	mismatch.Status.UUID = "u2"
	runErrCases(t, h, []errCase{
		{"empty batch", CmdUpdateTaskStatus, updates(), inv},
		{"no uuid", CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", protocol.TaskRunning, "")), inv},
		{"bad state fails the batch", CmdUpdateTaskStatus, updates(
			update("fw-1", "t1", "ag-1", protocol.TaskRunning, "u1"),
			update("fw-1", "t1", "ag-1", "BORED", "u2")), inv},
		{"uuid mismatch", CmdUpdateTaskStatus, updates(mismatch), inv},
		{"no time", CmdUpdateTaskStatus, noTime, inv},
	})
}

// TestState_Apply_statusLifecycle walks one task through updates and
// acknowledgements: latest status wins, the unacked list follows, a stale
// ack is refused, and terminal + acknowledged removes the task.
func TestState_Apply_statusLifecycle(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	unacked := func() []TaskKey { return keys(h.view().UnackedTasks("fw-1")) }
	ack := func(id protocol.TaskID, uuid protocol.StatusUUID) (AckOutcome, error) {
		res, err := h.apply(CmdAcknowledgeStatus, ackOne("fw-1", id, uuid))
		if err != nil {
			return AckOutcome{}, err
		}
		r := res.(AckResult)
		return r[0], r[0].Err
	}

	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", protocol.TaskRunning, "r1")))
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskRunning, "r2")))
	if got := unacked(); !slices.Equal(got, []TaskKey{{"fw-1", "t1"}, {"fw-1", "t2"}}) {
		t.Fatalf("got unacked %v, want t1 t2", got)
	}
	if r, err := ack("t1", "r1"); err != nil || r.Removed || !r.Task.Acked {
		t.Fatalf("ack t1 r1: got %+v %v, want acked, kept", r, err)
	}
	if r, err := ack("t1", "r1"); err != nil || r.Removed {
		t.Fatalf("ack t1 r1 again: got %+v %v, want an idempotent success", r, err)
	}
	if got := unacked(); !slices.Equal(got, []TaskKey{{"fw-1", "t2"}}) {
		t.Fatalf("got unacked %v, want t2", got)
	}

	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskFinished, "f2")))
	if st, ok := h.task("fw-1", "t2").Pending(); !ok || st.UUID != "r2" {
		t.Fatalf("pending %s %v, want the unacknowledged r2 before f2", st.UUID, ok)
	}
	if r, err := ack("t2", "r2"); err != nil || r.Removed {
		t.Fatalf("ack t2 r2: got %+v %v, want the queue's head acknowledged, task kept", r, err)
	}
	if st, ok := h.task("fw-1", "t2").Pending(); !ok || st.UUID != "f2" {
		t.Fatalf("pending %s %v after acking r2, want f2", st.UUID, ok)
	}
	if _, err := ack("t2", "r2"); !errors.Is(err, ErrStaleAck) || !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("stale ack: got %v, want ErrStaleAck", err)
	}
	res, err := h.apply(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskRunning, "late")))
	if err != nil || len(res.(UpdateResult).Errors) != 1 || !errors.Is(res.(UpdateResult).Errors[0], ErrTaskTerminal) {
		t.Fatalf("update after terminal: got %+v %v, want ErrTaskTerminal", res, err)
	}
	if got := h.task("fw-1", "t2"); got.State != protocol.TaskFinished || got.StatusUUID != "f2" {
		t.Fatalf("got %s %s, want FINISHED f2 kept until acknowledged", got.State, got.StatusUUID)
	}
	if r, err := ack("t2", "f2"); err != nil || !r.Removed || r.Task.ID != "t2" {
		t.Fatalf("ack terminal: got %+v %v, want removed", r, err)
	}
	if _, ok := h.view().Task("fw-1", "t2"); ok {
		t.Fatal("terminal acknowledged task still present")
	}
	if got := keys(h.view().TasksByAgent("ag-1")); !slices.Equal(got, []TaskKey{{"fw-1", "t1"}}) {
		t.Errorf("got tasks by agent %v, want only t1", got)
	}
	if got := unacked(); len(got) != 0 {
		t.Errorf("got unacked %v, want none", got)
	}
	// A retried terminal update after removal is reported, not applied.
	res, _ = h.apply(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskFinished, "f2")))
	if errs := res.(UpdateResult).Errors; len(errs) != 1 || !errors.Is(errs[0], protocol.ErrUnknownTask) {
		t.Errorf("got %v, want unknown task", errs)
	}
	// The ID may be reused once the task is gone.
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t2"))
}

// TestState_Apply_unackedStatusesInOrder: statuses the framework has not
// acknowledged wait in order behind each other; acknowledging one also
// acknowledges those before it, acknowledging the latest all of them, and a
// framework that acknowledges nothing keeps only the newest maxUnacked
// before the latest.
func TestState_Apply_unackedStatusesInOrder(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	pending := func(id protocol.TaskID) protocol.StatusUUID {
		st, ok := h.task("fw-1", id).Pending()
		if !ok {
			return ""
		}
		return st.UUID
	}
	for _, u := range []struct {
		st   protocol.TaskState
		uuid protocol.StatusUUID
	}{{protocol.TaskStarting, "s1"}, {protocol.TaskRunning, "r1"}, {protocol.TaskRunning, "h1"}} {
		h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", u.st, u.uuid)))
	}
	if got := pending("t1"); got != "s1" {
		t.Fatalf("pending %q, want s1 first", got)
	}
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "r1"))
	if got, q := pending("t1"), h.task("fw-1", "t1").Unacked; got != "h1" || len(q) != 0 {
		t.Fatalf("after acking r1: pending %q, queue %v, want h1 and an empty queue", got, q)
	}
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", protocol.TaskFinished, "f1")))
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "f1"))
	if _, ok := h.view().Task("fw-1", "t1"); ok {
		t.Fatal("acknowledging the terminal latest left the task (and h1 queued before it)")
	}

	for i := 0; i < maxUnacked+4; i++ {
		h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskRunning, protocol.StatusUUID(fmt.Sprintf("u%d", i)))))
	}
	tk := h.task("fw-1", "t2")
	if len(tk.Unacked) != maxUnacked || tk.Unacked[0].UUID != "u3" || tk.StatusUUID != protocol.StatusUUID(fmt.Sprintf("u%d", maxUnacked+3)) {
		t.Fatalf("queue of %d from %s, latest %s; want %d from u3", len(tk.Unacked), tk.Unacked[0].UUID, tk.StatusUUID, maxUnacked)
	}
}

func TestState_Apply_acknowledgeStatusErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", protocol.TaskRunning, "u1")))
	ack := ackOne
	inv := protocol.ErrInvalidArgument
	runErrCases(t, h, []errCase{
		{"unknown framework", CmdAcknowledgeStatus, ack("fw-x", "t1", "u1"), protocol.ErrUnknownFramework},
		{"bad uuid", CmdAcknowledgeStatus, ack("fw-1", "t1", ""), inv},
		{"bad task id", CmdAcknowledgeStatus, ack("fw-1", "", "u1"), inv},
		{"bad framework id", CmdAcknowledgeStatus, ack("", "t1", "u1"), inv},
		{"no acks", CmdAcknowledgeStatus, &AcknowledgeStatus{FrameworkID: "fw-1"}, inv},
	})

	// Per-ack errors leave the rest of the batch applied.
	before := h.view().UnackedTasks("fw-1")
	res, err := h.apply(CmdAcknowledgeStatus, &AcknowledgeStatus{FrameworkID: "fw-1", Acks: []StatusAck{
		{TaskID: "t9", UUID: "u1"}, {TaskID: "t1", UUID: "u0"}, {TaskID: "t1", UUID: "u1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.(AckResult)
	if len(r) != 3 || !errors.Is(r[0].Err, protocol.ErrUnknownTask) || !errors.Is(r[1].Err, ErrStaleAck) ||
		r[2].Err != nil || !r[2].Task.Acked {
		t.Fatalf("got outcomes %+v, want unknown task, stale, acked", r)
	}
	if len(before) != 1 || len(h.view().UnackedTasks("fw-1")) != 0 {
		t.Fatalf("unacked went from %d to %d tasks, want 1 to 0", len(before), len(h.view().UnackedTasks("fw-1")))
	}
}

func ackOne(fw protocol.FrameworkID, id protocol.TaskID, uuid protocol.StatusUUID) *AcknowledgeStatus {
	return &AcknowledgeStatus{FrameworkID: fw, Acks: []StatusAck{{TaskID: id, UUID: uuid}}}
}
