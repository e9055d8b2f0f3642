package state

import (
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestState_Apply_markAgentsSilent sets and clears agents' silence marks,
// skips agents it does not know, survives a snapshot, and is cleared by a
// reregistration; bad input changes nothing.
func TestState_Apply_markAgentsSilent(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	res := h.must(CmdMarkAgentsSilent, &MarkAgentsSilent{Time: t0 + 100, Silent: []AgentSilence{
		{AgentID: "ag-1", Since: t0 + 10}, {AgentID: "ag-2", Since: t0 + 20}, {AgentID: "ag-nobody", Since: t0 + 30}}})
	if res != 2 {
		t.Errorf("changed %v agents, want 2 (ag-nobody skipped)", res)
	}
	silent := func(id protocol.AgentID) int64 {
		a, ok := h.view().Agent(id)
		if !ok {
			t.Fatalf("agent %s missing", id)
		}
		return a.SilentSince
	}
	if silent("ag-1") != t0+10 || silent("ag-2") != t0+20 {
		t.Fatalf("silent since %d and %d, want %d and %d", silent("ag-1"), silent("ag-2"), t0+10, t0+20)
	}
	if a, _ := roundTrip(t, h.s).Snapshot().Agent("ag-1"); a.SilentSince != t0+10 {
		t.Errorf("after a snapshot: silent since %d, want %d", a.SilentSince, t0+10)
	}
	h.must(CmdMarkAgentsSilent, &MarkAgentsSilent{Time: t0 + 200, Heard: []protocol.AgentID{"ag-1"}})
	if silent("ag-1") != 0 || silent("ag-2") != t0+20 {
		t.Errorf("after ag-1 was heard: %d and %d, want 0 and %d", silent("ag-1"), silent("ag-2"), t0+20)
	}
	h.must(CmdReregisterAgent, reregister("ag-2"))
	if silent("ag-2") != 0 {
		t.Errorf("after reregistering: ag-2 silent since %d, want 0", silent("ag-2"))
	}
	inv := protocol.ErrInvalidArgument
	runErrCases(t, h, []errCase{
		{"empty", CmdMarkAgentsSilent, &MarkAgentsSilent{Time: t0}, inv},
		{"no time", CmdMarkAgentsSilent, &MarkAgentsSilent{Heard: []protocol.AgentID{"ag-1"}}, inv},
		{"since after time", CmdMarkAgentsSilent, &MarkAgentsSilent{Time: t0, Silent: []AgentSilence{{AgentID: "ag-1", Since: t0 + 1}}}, inv},
		{"since zero", CmdMarkAgentsSilent, &MarkAgentsSilent{Time: t0, Silent: []AgentSilence{{AgentID: "ag-1"}}}, inv},
		{"bad id", CmdMarkAgentsSilent, &MarkAgentsSilent{Time: t0, Heard: []protocol.AgentID{"a b"}}, inv},
	})
}
