package testcluster

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// FrameworkTask is a snapshot of one task as the framework saw it.
type FrameworkTask struct {
	Info    protocol.TaskInfo
	Outcome AcceptOutcome
	// Statuses are the status updates received, in arrival order,
	// duplicates included.
	Statuses []protocol.TaskStatus
	// Acked are the UUIDs the leader accepted acknowledgements for.
	Acked []protocol.StatusUUID
}

// Last returns the last status received, if any, not counting a duplicate
// of an earlier update (a resend can arrive after the update that followed
// it, as a framework that drops duplicates by UUID never sees).
func (t FrameworkTask) Last() (protocol.TaskStatus, bool) {
	var last protocol.TaskStatus
	seen := map[protocol.StatusUUID]bool{}
	for _, st := range t.Statuses {
		if st.UUID != "" && seen[st.UUID] {
			continue
		}
		seen[st.UUID] = true
		last = st
	}
	return last, len(t.Statuses) > 0
}

// Seen reports whether a status with state st was received.
func (t FrameworkTask) Seen(st protocol.TaskState) bool {
	return slices.ContainsFunc(t.Statuses, func(s protocol.TaskStatus) bool { return s.State == st })
}

// Terminal reports whether a terminal status was received.
func (t FrameworkTask) Terminal() bool {
	return slices.ContainsFunc(t.Statuses, func(s protocol.TaskStatus) bool { return s.State.Terminal() })
}

type fwTask struct {
	info     protocol.TaskInfo
	outcome  AcceptOutcome
	statuses []protocol.TaskStatus
	acked    []protocol.StatusUUID
}

// terminal reports whether the update uuid carried a terminal state.
func (t *fwTask) terminal(uuid protocol.StatusUUID) bool {
	return slices.ContainsFunc(t.statuses, func(s protocol.TaskStatus) bool {
		return s.UUID == uuid && s.State.Terminal()
	})
}

// PendingAcks counts acknowledgements not answered yet.
func (f *TestFramework) PendingAcks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pendingAcks
}

// AckErrors returns acknowledgements that failed for good.
func (f *TestFramework) AckErrors() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ackErrors)
}

// ErrorEvents returns the error events received.
func (f *TestFramework) ErrorEvents() []protocol.ErrorEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.errorEvents)
}

// Offers returns the outstanding offers (received, not used, declined or
// rescinded), ordered by ID.
func (f *TestFramework) Offers() []protocol.Offer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Collect(maps.Values(f.outstanding))
	slices.SortFunc(out, func(a, b protocol.Offer) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// OffersSeen returns every offer received, in arrival order.
func (f *TestFramework) OffersSeen() []protocol.Offer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.offersSeen)
}

// Rescinds returns every rescind received.
func (f *TestFramework) Rescinds() []protocol.RescindEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.rescinds)
}

// WaitOffers waits until at least n offers are outstanding and returns
// them.
func (f *TestFramework) WaitOffers(n int) []protocol.Offer {
	f.t.Helper()
	var out []protocol.Offer
	testutil.WaitFor(f.t, DefaultWait, 5*time.Millisecond, func() error {
		if out = f.Offers(); len(out) < n {
			return fmt.Errorf("framework %s holds %d offers, want %d", f.opts.Name, len(out), n)
		}
		return nil
	})
	return out
}

// Tasks returns a snapshot of every task the framework launched or heard
// of, in that order.
func (f *TestFramework) Tasks() []FrameworkTask {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FrameworkTask, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, f.snapshotLocked(f.tasks[id]))
	}
	return out
}

// Task returns a snapshot of one task.
func (f *TestFramework) Task(id protocol.TaskID) (FrameworkTask, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[id]
	if !ok {
		return FrameworkTask{}, false
	}
	return f.snapshotLocked(t), true
}

func (f *TestFramework) snapshotLocked(t *fwTask) FrameworkTask {
	return FrameworkTask{Info: t.info, Outcome: t.outcome, Statuses: slices.Clone(t.statuses), Acked: slices.Clone(t.acked)}
}

// Statuses returns the status updates received for a task.
func (f *TestFramework) Statuses(id protocol.TaskID) []protocol.TaskStatus {
	t, _ := f.Task(id)
	return t.Statuses
}

// WaitState waits until a status with state st arrived for the task.
func (f *TestFramework) WaitState(id protocol.TaskID, st protocol.TaskState) {
	f.t.Helper()
	testutil.WaitFor(f.t, DefaultWait, 5*time.Millisecond, func() error {
		if t, _ := f.Task(id); !t.Seen(st) {
			return fmt.Errorf("task %s of %s: got statuses %v, want %s", id, f.opts.Name, states(t.Statuses), st)
		}
		return nil
	})
}

func states(sts []protocol.TaskStatus) []protocol.TaskState {
	out := make([]protocol.TaskState, len(sts))
	for i, s := range sts {
		out[i] = s.State
	}
	return out
}

// Preemptions returns the preemption warnings (and withdrawals) received,
// in order.
func (f *TestFramework) Preemptions() []protocol.PreemptionEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.preemptions)
}
