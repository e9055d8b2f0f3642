package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// fuzzFixture is fixture plus tasks in several states, so that random
// commands meet known IDs.
func fuzzFixture(t testing.TB) *harness {
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2", "t3"))
	h.must(CmdLaunchTasks, launch("fw-pa", "ag-2", "t1"))
	h.must(CmdUpdateTaskStatus, updates(
		update("fw-1", "t1", "ag-1", protocol.TaskRunning, "u1"),
		update("fw-1", "t2", "ag-1", protocol.TaskFinished, "u2"),
		update("fw-pa", "t1", "ag-2", protocol.TaskRunning, "u3"),
	))
	return h
}

func applySeeds(f *testing.F) {
	seeds := []struct {
		typ  CmdType
		body any
	}{
		{CmdSetRole, &SetRole{Path: "eng/x", Weight: 1.5, Quota: &Quota{Limit: taskRes}}},
		{CmdRemoveRole, &RemoveRole{Path: "eng"}},
		{CmdRegisterFramework, registerFramework("fw-2", protocol.CapGang)},
		{CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "fw-1", Time: t0 + 1}},
		{CmdSetFrameworkSuppressed, &SetFrameworkSuppressed{FrameworkID: "fw-pa", Suppressed: true}},
		{CmdRemoveFramework, &RemoveFramework{FrameworkID: "fw-1"}},
		{CmdRegisterAgent, registerAgent("ag-3")},
		{CmdReregisterAgent, reregister("ag-1", reported("fw-1", "t1", protocol.TaskKilling, ""),
			reported("fw-1", "t9", protocol.TaskRunning, ""))},
		{CmdSetAgentState, &SetAgentState{AgentID: "ag-2", State: AgentUnreachable, Time: t0 + 2}},
		{CmdRemoveAgent, &RemoveAgent{AgentID: "ag-1", Time: t0 + 3}},
		{CmdLaunchTasks, launch("fw-1", "ag-2", "t7", "t8")},
		{CmdUpdateTaskStatus, updates(update("fw-1", "t3", "ag-1", protocol.TaskFailed, "u9"),
			update("fw-1", "t2", "ag-1", protocol.TaskRunning, "u10"))},
		{CmdAcknowledgeStatus, ackOne("fw-1", "t2", "u2")},
		{CmdMarkAgentTasks, &MarkAgentTasks{AgentID: "ag-1", State: protocol.TaskUnreachable, Time: t0 + 4}},
	}
	for _, s := range seeds {
		cmd, err := Encode(s.typ, s.body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(cmd)
	}
	f.Add([]byte{})
	f.Add([]byte{byte(0x42 | IgnoreUnknownFlag)})
	f.Add([]byte{0x42, 0x80})
	f.Add([]byte{byte(CmdLaunchTasks), 0x81, 0xa5, 't', 'a', 's', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
}

// FuzzApply applies one arbitrary command to a state with fixtures. Apply
// must not panic; a corrupt command changes nothing, not even the index;
// a domain error carries a wire code and changes nothing but the index;
// and whatever happens the state keeps its invariants.
func FuzzApply(f *testing.F) {
	applySeeds(f)
	f.Fuzz(func(t *testing.T, cmd []byte) {
		h := fuzzFixture(t)
		before, idx := dataBytes(t, h.s), h.s.Index()
		_, err := h.s.Apply(idx+1, cmd)
		switch {
		case errors.Is(err, ErrCorrupt):
			if h.s.Index() != idx || !bytes.Equal(dataBytes(t, h.s), before) {
				t.Fatalf("corrupt command %v changed the state", err)
			}
			return
		case err != nil:
			if protocol.CodeOf(err) == protocol.CodeInternal {
				t.Fatalf("untyped domain error: %v", err)
			}
			if !bytes.Equal(dataBytes(t, h.s), before) {
				t.Fatalf("failed command %v changed the state", err)
			}
		}
		if h.s.Index() != idx+1 {
			t.Fatalf("got index %d, want %d", h.s.Index(), idx+1)
		}
		checkInvariants(t, h.view())
	})
}

// FuzzRestore feeds arbitrary bytes to Restore: it must not panic, must
// fail with a snapshot error, and a state it accepts must survive a round
// trip unchanged and keep applying commands. With fixCRC the input gets
// a correct checksum appended, so the fuzzer reaches the record decoder.
func FuzzRestore(f *testing.F) {
	good := snapshotBytes(f, fuzzFixture(f).view())
	f.Add(good, false)
	f.Add(good[:len(good)-4], true)
	f.Add(good[:len(good)/2], false)
	f.Add(good[:len(good)/2], true)
	s := New()
	randomLog(f, 3, s, 200)
	rnd := snapshotBytes(f, s.Snapshot())
	f.Add(rnd[:len(rnd)-4], true)
	f.Add([]byte(snapshotMagic), false)
	f.Add([]byte("garbage"), true)
	ign := rebuild(1, rec(recIgnorable|5, map[string]int{"x": 1}), rec(recEnd, endRecord{}))
	f.Add(ign[:len(ign)-4], true)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC {
			data = binary.BigEndian.AppendUint32(bytes.Clone(data), crc32.Checksum(data, castagnoli))
		}
		st, err := Restore(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrSnapshotCorrupt) && !errors.Is(err, ErrSnapshotVersion) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		v := st.Snapshot()
		b1 := snapshotBytes(t, v)
		st2, err := Restore(bytes.NewReader(b1))
		if err != nil {
			t.Fatalf("restore of a written snapshot: %v", err)
		}
		if b2 := snapshotBytes(t, st2.Snapshot()); !bytes.Equal(b1, b2) {
			t.Fatalf("snapshot is not stable across a round trip")
		}
		g := newLogGen(uint64(len(data)))
		for i := range 50 {
			typ, body := g.next(st)
			cmd, err := Encode(typ, body)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Apply(v.Index()+uint64(i)+1, cmd); errors.Is(err, ErrCorrupt) {
				t.Fatalf("apply %s: %v", typ, err)
			}
		}
	})
}
