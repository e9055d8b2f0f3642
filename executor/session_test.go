//go:build linux

package executor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// fakeMaster answers the agent API under its own subject prefix, as
// scripted by the test.
type fakeMaster struct {
	t    *testing.T
	nc   *nats.Conn
	subj protocol.Subjects

	mu          sync.Mutex
	registers   int
	reregisters []protocol.ReregisterRequest
	updates     []protocol.StatusUpdate
	// forget answers the next heartbeat with ErrUnknownAgent; gone answers
	// reregistrations with it; down answers status updates with
	// ErrUnavailable.
	forget, gone, down bool
	// poison refuses whole every status request with an update of this
	// task.
	poison protocol.TaskID
	// coflows are the flows of every coflow report, in the order reported.
	coflows []protocol.FlowProgress
}

func newFakeMaster(t *testing.T, c *testcluster.Cluster) *fakeMaster {
	t.Helper()
	m := &fakeMaster{t: t, nc: c.Connect("fake-master"), subj: protocol.Subjects{Prefix: "fake"}}
	if _, err := m.nc.Subscribe(m.subj.APIAll(), m.serve); err != nil {
		t.Fatal(err)
	}
	if err := m.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *fakeMaster) serve(msg *nats.Msg) {
	env, err := protocol.Decode(msg.Data)
	var body any
	if err == nil {
		body, _ = protocol.NewBody(env.Type)
		err = protocol.DecodeBody(env, body)
	}
	var result any
	if err == nil {
		result, err = m.handle(body)
	}
	data, _ := protocol.EncodeReply(result, err)
	_ = msg.Respond(data)
}

func (m *fakeMaster) handle(body any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r := body.(type) {
	case *protocol.RegisterRequest:
		m.registers++
		return &protocol.RegisterReply{AgentID: protocol.AgentID("ag-fake-" + strconv.Itoa(m.registers)), HeartbeatInterval: 20 * time.Millisecond}, nil
	case *protocol.HeartbeatRequest:
		if m.forget {
			m.forget = false
			return nil, protocol.ErrUnknownAgent
		}
		return nil, nil
	case *protocol.ReregisterRequest:
		m.reregisters = append(m.reregisters, *r)
		if m.gone {
			return nil, fmt.Errorf("%w: agent is gone", protocol.ErrUnknownAgent)
		}
		return &protocol.RegisterReply{AgentID: r.AgentID, HeartbeatInterval: 20 * time.Millisecond}, nil
	case *protocol.StatusUpdateRequest:
		if m.down {
			return nil, protocol.ErrUnavailable
		}
		for _, u := range r.Updates {
			if m.poison != "" && u.Status.TaskID == m.poison {
				return nil, fmt.Errorf("%w: poisoned", protocol.ErrInvalidArgument)
			}
		}
		m.updates = append(m.updates, r.Updates...)
		return &protocol.StatusUpdateReply{}, nil
	case *protocol.CoflowReportRequest:
		if err := r.Validate(); err != nil {
			return nil, err
		}
		m.coflows = append(m.coflows, r.Flows...)
		return nil, nil
	}
	return nil, protocol.ErrUnknownType
}

func (m *fakeMaster) set(f func(m *fakeMaster)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

func (m *fakeMaster) states(id protocol.TaskID) []protocol.TaskState {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []protocol.TaskState
	for _, u := range m.updates {
		if u.Status.TaskID == id {
			out = append(out, u.Status.State)
		}
	}
	return out
}

func (m *fakeMaster) launch(t *testing.T, id protocol.AgentID, tasks ...protocol.TaskInfo) {
	t.Helper()
	for i := range tasks {
		tasks[i].AgentID = id
	}
	data, err := protocol.Encode(protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: "fw-fake", Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	m.command(t, id, data)
}

// command sends the agent a command as the leader of term 1 would.
func (m *fakeMaster) command(t *testing.T, id protocol.AgentID, data []byte) {
	t.Helper()
	m.commandOfTerm(t, id, data, "1")
}

// commandOfTerm sends the agent a command stamped with term ("" for none).
func (m *fakeMaster) commandOfTerm(t *testing.T, id protocol.AgentID, data []byte, term string) {
	t.Helper()
	subject, err := m.subj.AgentCmd("", id)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	if term != "" {
		msg.Header.Set(protocol.TermHeader, term)
	}
	if err := m.nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
}

func TestAgent_SessionWithScriptedMaster(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	m := newFakeMaster(t, c)
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	a := startAgent(t, cfg)
	if a.ID() != "ag-fake-1" {
		t.Fatalf("agent id %s", a.ID())
	}
	m.launch(t, a.ID(), shellTask("ends", waitScript), shellTask("runs", "exec sleep 60"))
	testutilWaitFor(t, func() error {
		want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning}
		for _, id := range []protocol.TaskID{"ends", "runs"} {
			if got := m.states(id); !equalStates(got, want) {
				return fmt.Errorf("updates of %s: %v", id, got)
			}
		}
		return nil
	})

	// The master stops taking updates; the task ends; then the leader
	// forgets the agent, which reregisters with its queue.
	m.set(func(m *fakeMaster) { m.down = true })
	touch(t, a.Agent, sandboxOf(t, a, "fw-fake", "ends"), "go")
	waitAgentTask(t, a.Agent, "fw-fake", "ends", protocol.TaskFinished)
	m.set(func(m *fakeMaster) { m.forget = true })
	var rr protocol.ReregisterRequest
	testutilWaitFor(t, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.reregisters) == 0 {
			return errors.New("no reregistration yet")
		}
		rr = m.reregisters[0]
		return nil
	})
	if rr.AgentID != a.ID() || len(rr.Tasks) != 2 || rr.Addresses.HTTP != a.HTTPAddr() {
		t.Fatalf("reregistration %+v, want agent %s with 2 tasks", rr, a.ID())
	}
	for _, st := range rr.Tasks {
		want := protocol.TaskRunning
		if st.TaskID == "ends" {
			want = protocol.TaskFinished
		}
		if st.State != want {
			t.Errorf("reregistration reports %s %s, want %s", st.TaskID, st.State, want)
		}
	}
	if len(rr.Unacked) != 1 || rr.Unacked[0].Status.State != protocol.TaskFinished {
		t.Fatalf("unacked %+v, want the FINISHED update", rr.Unacked)
	}
	m.set(func(m *fakeMaster) { m.down = false })
	// The reregistration delivered the final update: it is not resent.
	testutilWaitFor(t, func() error {
		if ts, ok := agentTask(a.Agent, "fw-fake", "ends"); !ok || ts.PendingUpdates != 0 {
			return fmt.Errorf("ends: %+v, want nothing pending", ts)
		}
		return nil
	})
	if got := m.states("ends"); len(got) != 2 {
		t.Fatalf("updates of ends after the reregistration: %v", got)
	}

	// A master that does not know the agent at all: the agent kills its
	// tasks and registers anew.
	m.set(func(m *fakeMaster) { m.gone, m.forget = true, true })
	testutilWaitFor(t, func() error {
		if id := a.ID(); id != "ag-fake-2" {
			return fmt.Errorf("agent id %s, want ag-fake-2", id)
		}
		return nil
	})
	rec, _, err := a.ckpt.loadAgent()
	if err != nil || rec.AgentID != "ag-fake-2" {
		t.Fatalf("checkpointed id %+v, %v", rec, err)
	}
	if st := a.State(); len(st.Tasks) != 1 || st.Tasks[0].TaskID != "ends" {
		t.Fatalf("tasks after registering anew: %+v, want only the ended one remembered", st.Tasks)
	}
	exitRecorded(t, a.Agent, "fw-fake_runs")
}

func TestAgent_RunGuards(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cfg := testConfig(t, c, t.TempDir())
	a := startAgent(t, cfg)
	if err := a.Run(context.Background()); !errors.Is(err, ErrAlreadyRun) {
		t.Fatalf("second Run: got %v, want ErrAlreadyRun", err)
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Run(context.Background()); !errors.Is(err, ErrLocked) {
		t.Fatalf("second agent on the work dir: got %v, want ErrLocked", err)
	}
	if _, err := New(Config{WorkDir: cfg.WorkDir}); !errors.Is(err, ErrConfig) {
		t.Fatalf("New without NATS: got %v, want ErrConfig", err)
	}
}

func TestAgent_UpdateRefusedWhole(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	m := newFakeMaster(t, c)
	m.set(func(m *fakeMaster) { m.poison = "bad" })
	cfg := testConfig(t, c, t.TempDir())
	cfg.SubjectPrefix = "fake"
	a := startAgent(t, cfg)
	m.launch(t, a.ID(), shellTask("bad", "true"), shellTask("good", "true"))
	testutilWaitFor(t, func() error {
		want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished}
		if got := m.states("good"); !equalStates(got, want) {
			return fmt.Errorf("updates of good: %v, want %v", got, want)
		}
		if ts, ok := agentTask(a.Agent, "fw-fake", "bad"); !ok || ts.State != protocol.TaskFinished || ts.PendingUpdates != 0 {
			return fmt.Errorf("bad on the agent: %+v, want FINISHED with its refused updates dropped", ts)
		}
		return nil
	})
	if got := m.states("bad"); len(got) != 0 {
		t.Fatalf("the master took updates of bad: %v", got)
	}
}
