package state

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// roundTrip writes h's state as a snapshot, restores it, checks the
// restored state writes the same bytes, and returns it.
func roundTrip(t *testing.T, s *State) *State {
	t.Helper()
	want := snapshotBytes(t, s.Snapshot())
	r, err := Restore(bytes.NewReader(want))
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if got := snapshotBytes(t, r.Snapshot()); !bytes.Equal(got, want) {
		t.Fatal("restored state writes different bytes")
	}
	return r
}

// taskIDs returns the task IDs of ts.
func taskIDs(ts []*Task) []protocol.TaskID {
	var out []protocol.TaskID
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestState_Apply_acknowledgedTerminalTaskIsCompleted(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	h.must(CmdUpdateTaskStatus, updates(
		update("fw-1", "t1", "ag-1", protocol.TaskFinished, "u1"),
		update("fw-1", "t2", "ag-1", protocol.TaskRunning, "u2"),
	))
	if got := h.view().CompletedTasks("fw-1"); len(got) != 0 {
		t.Fatalf("got completed %v before the ack, want none", taskIDs(got))
	}
	res := h.must(CmdAcknowledgeStatus, &AcknowledgeStatus{FrameworkID: "fw-1", Acks: []StatusAck{
		{TaskID: "t1", UUID: "u1"}, {TaskID: "t2", UUID: "u2"},
	}}).(AckResult)
	if !res[0].Removed || res[1].Removed {
		t.Fatalf("got removed %v %v, want true false", res[0].Removed, res[1].Removed)
	}
	v := h.view()
	if _, ok := v.Task("fw-1", "t1"); ok {
		t.Error("acknowledged terminal task t1 is still in the task table")
	}
	got := v.CompletedTasks("fw-1")
	if len(got) != 1 || got[0].ID != "t1" || got[0].State != protocol.TaskFinished || !got[0].Acked ||
		got[0].StatusUUID != "u1" || got[0].AgentID != "ag-1" {
		t.Fatalf("got completed %+v, want t1 FINISHED, acked", got)
	}
	if n := v.NumCompletedTasks(); n != 1 || len(v.CompletedTasks("fw-pa")) != 0 {
		t.Errorf("got %d completed tasks (fw-pa %d), want 1 (0)", n, len(v.CompletedTasks("fw-pa")))
	}
	r := roundTrip(t, h.s)
	if !reflect.DeepEqual(r.Snapshot().CompletedTasks("fw-1"), got) {
		t.Error("completed tasks differ after restore")
	}
	// A task ID may be reused once the task left the table; the history
	// keeps both.
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", protocol.TaskFailed, "u3")))
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "u3"))
	if got := h.view().CompletedTasks("fw-1"); len(got) != 2 || got[0].State != protocol.TaskFinished ||
		got[1].State != protocol.TaskFailed {
		t.Errorf("got completed %v, want t1 FINISHED then t1 FAILED", taskIDs(got))
	}
}

func TestState_Apply_completedTasksBounded(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	const n = MaxCompletedTasks + 5
	finish := func(h *harness, ids []protocol.TaskID, tag string) {
		h.t.Helper()
		h.must(CmdLaunchTasks, launch("fw-1", "ag-1", ids...))
		u := &UpdateTaskStatus{Time: t0 + 30}
		ack := &AcknowledgeStatus{FrameworkID: "fw-1"}
		for _, id := range ids {
			uuid := protocol.StatusUUID("u-" + tag + string(id))
			u.Updates = append(u.Updates, update("fw-1", id, "ag-1", protocol.TaskFinished, uuid))
			ack.Acks = append(ack.Acks, StatusAck{TaskID: id, UUID: uuid})
		}
		h.must(CmdUpdateTaskStatus, u)
		h.must(CmdAcknowledgeStatus, ack)
	}
	var ids []protocol.TaskID
	for i := range n {
		ids = append(ids, protocol.TaskID(fmt.Sprintf("t%04d", i)))
	}
	for batch := range slices.Chunk(ids, 300) {
		finish(h, batch, "")
	}
	got := taskIDs(h.view().CompletedTasks("fw-1"))
	if len(got) != MaxCompletedTasks || got[0] != ids[5] || got[len(got)-1] != ids[n-1] {
		t.Fatalf("got %d completed, %v..%v, want %d, %s..%s", len(got), got[0], got[len(got)-1],
			MaxCompletedTasks, ids[5], ids[n-1])
	}
	if h.view().NumTasks() != 0 {
		t.Errorf("got %d tasks in the table, want 0", h.view().NumTasks())
	}
	// The restored state goes on exactly like the original: the oldest
	// entry drops out of both.
	r := &harness{t: t, s: roundTrip(t, h.s), index: h.index}
	for _, x := range []*harness{h, r} {
		finish(x, []protocol.TaskID{"late"}, "x")
	}
	if !bytes.Equal(snapshotBytes(t, h.view()), snapshotBytes(t, r.view())) {
		t.Fatal("the restored state diverged")
	}
	got = taskIDs(r.view().CompletedTasks("fw-1"))
	if len(got) != MaxCompletedTasks || got[0] != ids[6] || got[len(got)-1] != "late" {
		t.Errorf("got %d completed, %v..%v, want %d, %s..late", len(got), got[0], got[len(got)-1],
			MaxCompletedTasks, ids[6])
	}
}

func TestState_Apply_removedFrameworkIsCompleted(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2", "t3"))
	h.must(CmdUpdateTaskStatus, updates(
		update("fw-1", "t1", "ag-1", protocol.TaskFinished, "u1"),
		update("fw-1", "t2", "ag-1", protocol.TaskFailed, "u2"),
		update("fw-1", "t3", "ag-1", protocol.TaskRunning, "u3"),
	))
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "u1"))
	h.must(CmdRemoveFramework, &RemoveFramework{FrameworkID: "fw-1"})
	v := h.view()
	if got := v.CompletedTasks("fw-1"); len(got) != 0 {
		t.Errorf("got completed tasks %v of a removed framework, want none", taskIDs(got))
	}
	cf := v.CompletedFrameworks()
	if len(cf) != 1 || cf[0].Framework.ID != "fw-1" || cf[0].Seq != 0 {
		t.Fatalf("got completed frameworks %+v, want fw-1", cf)
	}
	var states []string
	for _, task := range cf[0].Tasks {
		states = append(states, string(task.ID)+":"+string(task.State)+":"+task.Reason)
	}
	want := []string{"t1:FINISHED:", "t2:FAILED:", "t3:KILLED:" + protocol.ReasonFrameworkRemoved}
	if !slices.Equal(states, want) {
		t.Errorf("got tasks %v, want %v", states, want)
	}
	// A framework registered again under the ID starts without history.
	h.must(CmdRegisterFramework, registerFramework("fw-1"))
	if got := h.view().CompletedTasks("fw-1"); len(got) != 0 {
		t.Errorf("a new framework inherited %v", taskIDs(got))
	}
	for i := range MaxCompletedFrameworks + 2 {
		id := protocol.FrameworkID(fmt.Sprint("fw-x", i))
		h.must(CmdRegisterFramework, registerFramework(id))
		h.must(CmdRemoveFramework, &RemoveFramework{FrameworkID: id})
	}
	cf = h.view().CompletedFrameworks()
	if len(cf) != MaxCompletedFrameworks || cf[0].Framework.ID != "fw-x2" || cf[0].Seq != 3 ||
		cf[len(cf)-1].Seq != MaxCompletedFrameworks+2 {
		t.Fatalf("got %d completed frameworks from %s (seq %d), want %d from fw-x2 (seq 3)",
			len(cf), cf[0].Framework.ID, cf[0].Seq, MaxCompletedFrameworks)
	}
	r := roundTrip(t, h.s)
	if !reflect.DeepEqual(r.Snapshot().CompletedFrameworks(), cf) {
		t.Error("completed frameworks differ after restore")
	}
}

func TestRestore_completedErrors(t *testing.T) {
	t.Parallel()
	fw := &Framework{ID: "fw-1", Weight: 1, Connected: true}
	done := &Task{FrameworkID: "fw-1", ID: "t1", AgentID: "ag-1", State: protocol.TaskFinished, Kind: "fair"}
	running := &Task{FrameworkID: "fw-1", ID: "t1", AgentID: "ag-1", State: protocol.TaskRunning, Kind: "fair"}
	end := func(fws, completed, cfws int) []byte {
		return rec(recEnd, endRecord{Frameworks: fws, Completed: completed, CompletedFrameworks: cfws, Index: 7})
	}
	ct := func(seq uint64, t *Task) []byte { return rec(recCompletedTask, completedTask{Seq: seq, Task: t}) }
	cf := func(seq uint64, tasks ...*Task) []byte {
		return rec(recCompletedFramework, &CompletedFramework{Seq: seq, Framework: fw, Tasks: tasks})
	}
	good := rebuild(1, rec(recFramework, fw), ct(0, done), ct(1, done), cf(0, done), end(1, 2, 1))
	s, err := Restore(bytes.NewReader(good))
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if v := s.Snapshot(); len(v.CompletedTasks("fw-1")) != 2 || len(v.CompletedFrameworks()) != 1 {
		t.Fatalf("got %d completed tasks and %d frameworks, want 2 and 1",
			len(v.CompletedTasks("fw-1")), len(v.CompletedFrameworks()))
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"completed task before its framework", rebuild(1, ct(0, done), rec(recFramework, fw), end(1, 1, 0))},
		{"completed task not terminal", rebuild(1, rec(recFramework, fw), ct(0, running), end(1, 1, 0))},
		{"completed task without task", rebuild(1, rec(recFramework, fw), ct(0, nil), end(1, 1, 0))},
		{"completed tasks out of order", rebuild(1, rec(recFramework, fw), ct(1, done), ct(0, done), end(1, 2, 0))},
		{"completed framework task not terminal", rebuild(1, cf(0, running), end(0, 0, 1))},
		{"completed frameworks out of order", rebuild(1, cf(1), cf(1), end(0, 0, 2))},
		{"history count mismatch", rebuild(1, rec(recFramework, fw), ct(0, done), end(1, 0, 0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := Restore(bytes.NewReader(tc.data)); !errors.Is(err, ErrSnapshotCorrupt) || s != nil {
				t.Fatalf("got %v, %v, want ErrSnapshotCorrupt", s, err)
			}
		})
	}
}

// TestRestore_completedRecordsChecked: a snapshot whose completed records
// repeat a sequence number, or hold a task or framework that is not
// history, is refused even when the end record's counts agree with what
// a lenient reader would keep. It fails with the order checks allowing
// equal sequence numbers, or with the restore skipping a completed record
// it could not apply.
func TestRestore_completedRecordsChecked(t *testing.T) {
	t.Parallel()
	fw := &Framework{ID: "fw-1", Weight: 1, Connected: true}
	done := &Task{FrameworkID: "fw-1", ID: "t1", AgentID: "ag-1", State: protocol.TaskFinished, Kind: "fair"}
	running := &Task{FrameworkID: "fw-1", ID: "t1", AgentID: "ag-1", State: protocol.TaskRunning, Kind: "fair"}
	end := func(fws, completed, cfws int) []byte {
		return rec(recEnd, endRecord{Frameworks: fws, Completed: completed, CompletedFrameworks: cfws, Index: 7})
	}
	ct := func(seq uint64, t *Task) []byte { return rec(recCompletedTask, completedTask{Seq: seq, Task: t}) }
	cf := func(seq uint64, tasks ...*Task) []byte {
		return rec(recCompletedFramework, &CompletedFramework{Seq: seq, Framework: fw, Tasks: tasks})
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"completed task seq repeated", rebuild(1, rec(recFramework, fw), ct(3, done), ct(3, done), end(1, 1, 0))},
		{"completed framework seq repeated", rebuild(1, cf(2), cf(2), end(0, 0, 1))},
		{"completed task not terminal, not counted", rebuild(1, rec(recFramework, fw), ct(0, running), end(1, 0, 0))},
		{"completed framework task not terminal, not counted", rebuild(1, cf(0, running), end(0, 0, 0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := Restore(bytes.NewReader(tc.data)); !errors.Is(err, ErrSnapshotCorrupt) || s != nil {
				t.Fatalf("got %v, %v, want ErrSnapshotCorrupt", s, err)
			}
		})
	}
	// A completed framework may keep exactly MaxCompletedTasks tasks.
	tasks := make([]*Task, MaxCompletedTasks)
	for i := range tasks {
		tasks[i] = &Task{FrameworkID: "fw-1", ID: protocol.TaskID(fmt.Sprintf("t%d", i)), AgentID: "ag-1",
			State: protocol.TaskFinished, Kind: "fair"}
	}
	if _, err := Restore(bytes.NewReader(rebuild(1, cf(0, tasks...), end(0, 0, 1)))); err != nil {
		t.Errorf("a completed framework of %d tasks: %v", MaxCompletedTasks, err)
	}
	if _, err := Restore(bytes.NewReader(rebuild(1, cf(0, append(tasks, done)...), end(0, 0, 1)))); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("a completed framework of %d tasks: %v, want ErrSnapshotCorrupt", MaxCompletedTasks+1, err)
	}
}
