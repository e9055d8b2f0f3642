package state

import (
	"errors"
	"fmt"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestState_Apply_ackLeavesLaterQueued: acknowledging the first of two
// queued statuses leaves the second queued and pending, in order. Caught
// here: the queue emptied whenever something was left in it (cmd_task.go,
// acknowledge: len(n.Unacked) == 0 negated).
func TestState_Apply_ackLeavesLaterQueued(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	for _, u := range []struct {
		st   protocol.TaskState
		uuid protocol.StatusUUID
	}{{protocol.TaskStarting, "s1"}, {protocol.TaskRunning, "r1"}, {protocol.TaskRunning, "h1"}} {
		h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", u.st, u.uuid)))
	}
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "s1"))
	tk := h.task("fw-1", "t1")
	if len(tk.Unacked) != 1 || tk.Unacked[0].UUID != "r1" {
		t.Fatalf("after acking s1 the queue is %v, want r1 alone", tk.Unacked)
	}
	if st, ok := tk.Pending(); !ok || st.UUID != "r1" {
		t.Fatalf("after acking s1 pending %v (%v), want r1", st.UUID, ok)
	}
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "r1"))
	if st, ok := h.task("fw-1", "t1").Pending(); !ok || st.UUID != "h1" {
		t.Fatalf("after acking r1 pending %v (%v), want h1", st.UUID, ok)
	}
}

// TestState_Apply_listLimits: a command with exactly protocol.MaxListLen
// updates or acks is applied; one more is refused with
// ErrInvalidArgument and changes nothing. Caught here: either limit
// checked with >= (cmd_task.go, validate and applyAcknowledgeStatus).
func TestState_Apply_listLimits(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	ups := make([]protocol.StatusUpdate, protocol.MaxListLen+1)
	for i := range ups {
		ups[i] = update("fw-1", "t1", "ag-1", protocol.TaskRunning, protocol.StatusUUID(fmt.Sprintf("u%d", i)))
	}
	if _, err := h.apply(CmdUpdateTaskStatus, updates(ups...)); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("%d updates: %v, want ErrInvalidArgument", len(ups), err)
	}
	if got := h.task("fw-1", "t1").StatusUUID; got != "" {
		t.Fatalf("a refused command changed the task: status %q", got)
	}
	// Applying as many updates to one task is slow; the limit is checked
	// before anything is applied.
	if err := updates(ups[:protocol.MaxListLen]...).validate(); err != nil {
		t.Fatalf("%d updates refused: %v", protocol.MaxListLen, err)
	}
	latest := protocol.StatusUUID("u0")
	h.must(CmdUpdateTaskStatus, updates(ups[0]))

	acks := make([]StatusAck, protocol.MaxListLen+1)
	for i := range acks {
		acks[i] = StatusAck{TaskID: "t1", UUID: latest}
	}
	if _, err := h.apply(CmdAcknowledgeStatus, &AcknowledgeStatus{FrameworkID: "fw-1", Acks: acks}); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("%d acks: %v, want ErrInvalidArgument", len(acks), err)
	}
	if st, ok := h.task("fw-1", "t1").Pending(); !ok || st.UUID != latest {
		t.Fatalf("after a refused acknowledgement pending %q (%v), want %q", st.UUID, ok, latest)
	}
	res, err := h.apply(CmdAcknowledgeStatus, &AcknowledgeStatus{FrameworkID: "fw-1", Acks: acks[:protocol.MaxListLen]})
	if err != nil {
		t.Fatalf("%d acks: %v", protocol.MaxListLen, err)
	}
	if out := res.(AckResult); len(out) != protocol.MaxListLen || out[0].Err != nil {
		t.Fatalf("%d acks gave %d outcomes, the first %v", protocol.MaxListLen, len(out), out[0].Err)
	}
	if st, ok := h.task("fw-1", "t1").Pending(); ok {
		t.Fatalf("acking the latest left %q pending", st.UUID)
	}
}
