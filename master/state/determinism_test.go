package state

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestState_Apply_deterministic applies the same random log to two States
// and compares every result and the snapshots, byte for byte.
func TestState_Apply_deterministic(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			a := New()
			log := randomLog(t, seed, a, 600)
			b, c := New(), New()
			for i, cmd := range log {
				r1, e1 := b.Apply(uint64(i+1), cmd)
				r2, e2 := c.Apply(uint64(i+1), cmd)
				if fmt.Sprint(e1) != fmt.Sprint(e2) || !reflect.DeepEqual(r1, r2) {
					t.Fatalf("command %d (%s): got %v %v and %v %v", i, CmdType(cmd[0]), r1, e1, r2, e2)
				}
			}
			sa, sb, sc := snapshotBytes(t, a.Snapshot()), snapshotBytes(t, b.Snapshot()), snapshotBytes(t, c.Snapshot())
			if !bytes.Equal(sa, sb) || !bytes.Equal(sb, sc) {
				t.Fatalf("snapshots differ: %d, %d, %d bytes", len(sa), len(sb), len(sc))
			}
			checkInvariants(t, a.Snapshot())
			if a.Snapshot().NumTasks() == 0 {
				t.Errorf("the log left no tasks; the generator is too weak")
			}
			if a.Snapshot().NumCompletedTasks() == 0 || len(a.Snapshot().CompletedFrameworks()) == 0 {
				t.Errorf("the log left no completed history; the generator is too weak")
			}
		})
	}
}

// TestState_Apply_logCoverage checks that the random log exercises
// successes and errors of every command type, so the determinism and
// round-trip tests mean something.
func TestState_Apply_logCoverage(t *testing.T) {
	t.Parallel()
	s := New()
	g := newLogGen(42)
	ok, failed := map[CmdType]int{}, map[CmdType]int{}
	for i := range 3000 {
		typ, body := g.next(s)
		cmd, err := Encode(typ, body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Apply(uint64(i+1), cmd); err != nil {
			if errors.Is(err, ErrCorrupt) {
				t.Fatal(err)
			}
			failed[typ]++
		} else {
			ok[typ]++
		}
	}
	for _, typ := range CmdTypes() {
		if ok[typ] == 0 {
			t.Errorf("%s never succeeded", typ)
		}
		if failed[typ] == 0 && typ != CmdSetFrameworkSuppressed && typ != CmdUpdateTaskStatus {
			t.Errorf("%s never failed", typ)
		}
	}
}

// checkInvariants fails t if v breaks a structural invariant of the model
// or does not survive a snapshot round trip.
func checkInvariants(t testing.TB, v *View) {
	t.Helper()
	use := map[string]StoreUsage{}
	v.store.ascend("", "", func(_ string, e *StoreEntry) bool {
		u := use[e.Principal]
		u.Keys, u.Bytes = u.Keys+1, u.Bytes+e.size()
		use[e.Principal] = u
		return true
	})
	v.storeUse.ascend("", "", func(p string, u StoreUsage) bool {
		if use[p] != u {
			t.Fatalf("principal %q's store usage %+v, its entries %+v", p, u, use[p])
		}
		delete(use, p)
		return true
	})
	if len(use) != 0 {
		t.Fatalf("store entries without usage: %v", use)
	}
	n := 0
	v.byAgent.ascend("", "", func(string, struct{}) bool { n++; return true })
	if n != v.tasks.Len() || len(v.Tasks()) != v.tasks.Len() {
		t.Fatalf("got %d index entries and %d listed tasks, want %d", n, len(v.Tasks()), v.tasks.Len())
	}
	for _, task := range v.Tasks() {
		if _, ok := v.Framework(task.FrameworkID); !ok {
			t.Fatalf("task %s of unknown framework", task.Key())
		}
		if _, ok := v.byAgent.get(agentTaskKey(task.AgentID, task.FrameworkID, task.ID)); !ok {
			t.Fatalf("task %s missing from the agent index", task.Key())
		}
		st := task.Status
		if st.UUID != task.StatusUUID || st.State != task.State || st.TaskID != task.ID ||
			st.FrameworkID != task.FrameworkID || st.AgentID != task.AgentID {
			t.Fatalf("task %s: status %+v disagrees with the task", task.Key(), st)
		}
		if task.Terminal() && task.Acked {
			t.Fatalf("task %s is terminal and acknowledged but kept", task.Key())
		}
		if task.StatusUUID == "" && !task.Acked || !task.Kind.Valid() {
			t.Fatalf("task %s: uuid %q acked %v kind %q", task.Key(), task.StatusUUID, task.Acked, task.Kind)
		}
	}
	completed := 0
	for _, f := range v.Frameworks() {
		if f.Connected != (f.DisconnectedAt == 0) || f.Weight <= 0 {
			t.Fatalf("framework %+v: connection state or weight inconsistent", f)
		}
		history := v.CompletedTasks(f.ID)
		if len(history) > MaxCompletedTasks {
			t.Fatalf("framework %s keeps %d completed tasks", f.ID, len(history))
		}
		for _, task := range history {
			if !task.Terminal() || !task.Acked || task.FrameworkID != f.ID {
				t.Fatalf("completed task %s: %s, acked %v", task.Key(), task.State, task.Acked)
			}
		}
		completed += len(history)
	}
	if completed != v.NumCompletedTasks() {
		t.Fatalf("got %d completed tasks of live frameworks, want all %d", completed, v.NumCompletedTasks())
	}
	if cf := v.CompletedFrameworks(); len(cf) > MaxCompletedFrameworks {
		t.Fatalf("got %d completed frameworks", len(cf))
	}
	for _, a := range v.Agents() {
		if (a.State == AgentActive || a.State == AgentDraining) && a.UnreachableAt != 0 {
			t.Fatalf("agent %+v: %s with unreachable_at", a, a.State)
		}
	}
	var buf bytes.Buffer
	if _, err := v.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	want := bytes.Clone(buf.Bytes())
	r, err := Restore(&buf)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if got := snapshotBytes(t, r.Snapshot()); !bytes.Equal(got, want) {
		t.Fatalf("round trip changed the snapshot")
	}
}

// TestCanonical_mapOrder checks that encoding does not depend on map
// iteration order, which msgpack leaves random for most map types.
func TestCanonical_mapOrder(t *testing.T) {
	t.Parallel()
	attrs := protocol.Attributes{}
	for i := range 50 {
		attrs[fmt.Sprint("k", i)] = protocol.Number(float64(i))
	}
	a := &Agent{ID: "a", Attributes: attrs, Resources: agentRes}
	first, err := marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		got, err := marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatal("got different bytes for the same value")
		}
	}
	var back Agent
	if err := decodeBody(first, &back); err != nil || !reflect.DeepEqual(back, *a) {
		t.Fatalf("got %+v %v, want the agent back", back, err)
	}
}
