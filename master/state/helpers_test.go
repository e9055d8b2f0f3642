package state

import (
	"bytes"
	"errors"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// t0 is the fixtures' base time.
const t0 int64 = 1_700_000_000_000_000_000

// harness applies commands to a State at increasing indexes.
type harness struct {
	t     testing.TB
	s     *State
	index uint64
}

func newHarness(t testing.TB) *harness { return &harness{t: t, s: New()} }

// apply encodes and applies one command at the next index.
func (h *harness) apply(typ CmdType, body any) (any, error) {
	h.t.Helper()
	cmd, err := Encode(typ, body)
	if err != nil {
		h.t.Fatalf("Encode(%s): %v", typ, err)
	}
	h.index++
	return h.s.Apply(h.index, cmd)
}

// must applies one command that must succeed.
func (h *harness) must(typ CmdType, body any) any {
	h.t.Helper()
	res, err := h.apply(typ, body)
	if err != nil {
		h.t.Fatalf("apply %s: %v", typ, err)
	}
	return res
}

func (h *harness) view() *View { return h.s.Snapshot() }

// dataBytes returns the snapshot bytes of s with the index zeroed, so two
// states compare equal when only their indexes differ.
func dataBytes(t testing.TB, s *State) []byte {
	t.Helper()
	v := s.Snapshot()
	v.index = 0
	var buf bytes.Buffer
	if _, err := v.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

func snapshotBytes(t testing.TB, v *View) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := v.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

// errCase is one command that must fail with want and change nothing.
type errCase struct {
	name string
	typ  CmdType
	body any
	want error
}

func runErrCases(t *testing.T, h *harness, cases []errCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dataBytes(t, h.s)
			idx := h.s.Index()
			res, err := h.apply(tc.typ, tc.body)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got err %v, want %v", err, tc.want)
			}
			if errors.Is(err, ErrCorrupt) {
				t.Fatalf("got corrupt %v, want a domain error", err)
			}
			if res != nil {
				t.Errorf("got result %v, want nil", res)
			}
			if !bytes.Equal(dataBytes(t, h.s), before) {
				t.Errorf("state changed after error %v", err)
			}
			if got := h.s.Index(); got != idx+1 {
				t.Errorf("got index %d, want %d", got, idx+1)
			}
		})
	}
}

var (
	agentRes = protocol.Resources{
		Scalars: map[string]int64{protocol.ResCPUs: 8000, protocol.ResMem: 16384},
		Ranges:  map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 32000}}},
	}
	taskRes = protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 256})
)

func registerAgent(id protocol.AgentID) *RegisterAgent {
	return &RegisterAgent{
		AgentID: id, Hostname: string(id) + ".example", HTTPAddr: "10.0.0.1:5051",
		Resources: agentRes, Attributes: protocol.Attributes{"rack": protocol.Text("r1")},
		Version: "1.0", Time: t0,
	}
}

func registerFramework(id protocol.FrameworkID, caps ...string) *RegisterFramework {
	return &RegisterFramework{
		ID: id, Name: "name-" + string(id), Principal: "p", Role: "eng",
		FailoverTimeout: 60e9, Capabilities: caps, Time: t0,
	}
}

func taskInfo(id protocol.TaskID, ag protocol.AgentID) protocol.TaskInfo {
	return protocol.TaskInfo{
		TaskID: id, Name: "t", AgentID: ag, Resources: taskRes,
		Command: protocol.CommandInfo{Value: "sleep", Args: []string{"1"}},
	}
}

func launch(fw protocol.FrameworkID, ag protocol.AgentID, ids ...protocol.TaskID) *LaunchTasks {
	c := &LaunchTasks{FrameworkID: fw, AgentID: ag, Time: t0 + 10}
	for _, id := range ids {
		c.Tasks = append(c.Tasks, taskInfo(id, ag))
	}
	return c
}

func update(fw protocol.FrameworkID, id protocol.TaskID, ag protocol.AgentID, st protocol.TaskState, uuid protocol.StatusUUID) protocol.StatusUpdate {
	return protocol.StatusUpdate{
		UUID:   uuid,
		Status: protocol.TaskStatus{TaskID: id, FrameworkID: fw, AgentID: ag, State: st, Timestamp: t0 + 20},
	}
}

func updates(us ...protocol.StatusUpdate) *UpdateTaskStatus {
	return &UpdateTaskStatus{Updates: us, Time: t0 + 30}
}

// fixture returns a harness with role eng, agents ag-1 and ag-2, framework
// fw-1 and the partition-aware fw-pa.
func fixture(t testing.TB) *harness {
	h := newHarness(t)
	h.must(CmdSetRole, &SetRole{Path: "eng", Weight: 2})
	h.must(CmdRegisterAgent, registerAgent("ag-1"))
	h.must(CmdRegisterAgent, registerAgent("ag-2"))
	h.must(CmdRegisterFramework, registerFramework("fw-1"))
	h.must(CmdRegisterFramework, registerFramework("fw-pa", protocol.CapPartitionAware))
	return h
}

// task returns the task or fails.
func (h *harness) task(fw protocol.FrameworkID, id protocol.TaskID) *Task {
	h.t.Helper()
	t, ok := h.view().Task(fw, id)
	if !ok {
		h.t.Fatalf("task %s/%s not found", fw, id)
	}
	return t
}

// keys returns the keys of tasks.
func keys(ts []*Task) []TaskKey {
	var out []TaskKey
	for _, t := range ts {
		out = append(out, t.Key())
	}
	return out
}

// statusKeys returns "fw/task:STATE" for each status.
func statusKeys(sts []protocol.TaskStatus) []string {
	var out []string
	for _, s := range sts {
		out = append(out, string(s.FrameworkID)+"/"+string(s.TaskID)+":"+string(s.State))
	}
	return out
}
