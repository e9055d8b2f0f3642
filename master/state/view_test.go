package state

import (
	"bytes"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestState_Snapshot_copyOnWrite checks that a View taken before applies
// does not change after them, and that the objects it handed out are not
// modified in place.
func TestState_Snapshot_copyOnWrite(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	old := h.view()
	oldBytes := snapshotBytes(t, old)
	oldT1, _ := old.Task("fw-1", "t1")
	oldT1Copy := *oldT1
	oldFw, _ := old.Framework("fw-1")
	oldFwCopy := *oldFw
	oldAgent, _ := old.Agent("ag-1")
	oldAgentCopy := *oldAgent

	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t1", "ag-1", protocol.TaskRunning, "u1")))
	h.must(CmdAcknowledgeStatus, ackOne("fw-1", "t1", "u1"))
	h.must(CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "fw-1", Time: t0 + 99})
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: AgentDraining, Time: t0 + 99})
	h.must(CmdLaunchTasks, launch("fw-1", "ag-2", "t3"))
	h.must(CmdRemoveAgent, &RemoveAgent{AgentID: "ag-2", Time: t0 + 100})
	h.must(CmdRemoveFramework, &RemoveFramework{FrameworkID: "fw-pa"})
	h.must(CmdSetRole, &SetRole{Path: "eng", Weight: 9})

	if !bytes.Equal(snapshotBytes(t, old), oldBytes) {
		t.Error("the old View changed")
	}
	if old.Index() == h.s.Index() {
		t.Error("the old View's index moved")
	}
	if !reflect.DeepEqual(*oldT1, oldT1Copy) {
		t.Error("a task handed out was modified in place")
	}
	if oldFw.Connected != oldFwCopy.Connected || oldFw.DisconnectedAt != oldFwCopy.DisconnectedAt {
		t.Error("a framework handed out was modified in place")
	}
	if oldAgent.State != oldAgentCopy.State {
		t.Error("an agent handed out was modified in place")
	}
	if got := keys(old.Tasks()); !slices.Equal(got, []TaskKey{{"fw-1", "t1"}, {"fw-1", "t2"}}) {
		t.Errorf("got old tasks %v, want t1 t2", got)
	}
	if _, ok := old.Framework("fw-pa"); !ok {
		t.Error("old View lost a framework removed later")
	}
	if r, _ := old.Role("eng"); r.Weight != 2 {
		t.Errorf("got old role weight %v, want 2", r.Weight)
	}
	nv := h.view()
	if nt1, _ := nv.Task("fw-1", "t1"); nt1 == oldT1 || !nt1.Acked || nt1.State != protocol.TaskRunning {
		t.Errorf("got new t1 %+v, want a new acked RUNNING object", nt1)
	}
}

// TestState_Snapshot_concurrent reads Views while commands apply; run it
// with -race.
func TestState_Snapshot_concurrent(t *testing.T) {
	t.Parallel()
	s := New()
	g := newLogGen(7)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				v := s.Snapshot()
				n := 0
				for _, task := range v.Tasks() {
					if task.Status.TaskID != task.ID {
						t.Errorf("torn task %s", task.Key())
					}
					n++
				}
				for _, a := range v.Agents() {
					n += len(v.TasksByAgent(a.ID))
				}
				for _, f := range v.Frameworks() {
					_ = v.UnackedTasks(f.ID)
				}
				if n < v.NumTasks() {
					t.Errorf("listed %d tasks, want at least %d", n, v.NumTasks())
				}
			}
		})
	}
	for i := range 1500 {
		typ, body := g.next(s)
		cmd, err := Encode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Apply(uint64(i+1), cmd)
	}
	close(done)
	wg.Wait()
	checkInvariants(t, s.Snapshot())
}
