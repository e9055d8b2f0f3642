package framework_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// preemptRecorder is a recorder that also records preemption warnings.
type preemptRecorder struct {
	sdktest.Recorder
	pmu    sync.Mutex
	events []protocol.PreemptionEvent
}

var _ framework.PreemptionHandler = (*preemptRecorder)(nil)

func (p *preemptRecorder) Preempting(_ *framework.Driver, ev protocol.PreemptionEvent) {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	p.events = append(p.events, ev)
}

// waitPreemption waits for the n-th warning (from 1) and returns it.
func (p *preemptRecorder) waitPreemption(t *testing.T, n int) protocol.PreemptionEvent {
	t.Helper()
	var ev protocol.PreemptionEvent
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		p.pmu.Lock()
		defer p.pmu.Unlock()
		if len(p.events) < n {
			return fmt.Errorf("%d warnings, want %d", len(p.events), n)
		}
		ev = p.events[n-1]
		return nil
	})
	return ev
}

// publishPreemption sends the framework of d ev on its event subject, as
// the leader sends its events: msgpack envelope, stamped with the
// framework's session. The leader does not send warnings of its own in
// these tests (no preemption is configured).
func publishPreemption(t *testing.T, c *testcluster.Cluster, d *framework.Driver, ev protocol.PreemptionEvent) {
	t.Helper()
	f, ok := c.WaitForLeader().View().Framework(d.ID())
	if !ok {
		t.Fatalf("framework %s unknown to the leader", d.ID())
	}
	subject, err := c.Subjects().FrameworkEvents(f.Principal, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, err := protocol.Encode(protocol.MsgPreemptionEvent, ev)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(protocol.SessionHeader, protocol.FormatSession(f.Session))
	nc := c.Connect("preemption")
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// launchRunning launches tasks that run until killed on offer o and waits
// until they run.
func launchRunning(t *testing.T, rec *sdktest.Recorder, d *framework.Driver, o protocol.Offer, ids ...string) []protocol.TaskInfo {
	t.Helper()
	var tasks []protocol.TaskInfo
	for _, id := range ids {
		tasks = append(tasks, task(id, unit(), testcluster.RunUntilKilled()))
	}
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, tasks...); err != nil {
		t.Fatal(err)
	}
	for i := range tasks {
		st := rec.WaitState(t, tasks[i].TaskID, protocol.TaskRunning)
		tasks[i].AgentID = st.AgentID
	}
	return tasks
}

func warned(d *framework.Driver) []protocol.TaskID {
	var out []protocol.TaskID
	for _, w := range d.Warned() {
		out = append(out, w.Task.TaskID)
	}
	return out
}

// TestDriver_PreemptionWarning: a warning reaches Preempting with its
// tasks, reasons and deadline, and Warned lists it; a withdrawal reaches
// Preempting and lifts the warning of the tasks it names; a warned task
// that ends leaves Warned.
func TestDriver_PreemptionWarning(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := &preemptRecorder{Recorder: sdktest.Recorder{Timeout: wait}}
	d := start(t, c, rec).d
	o := rec.WaitOffer(t, d, 0, nil)
	tasks := launchRunning(t, &rec.Recorder, d, o, "a", "b")
	deadline := time.Now().Add(time.Minute).Truncate(time.Microsecond)
	sent := protocol.PreemptionEvent{Deadline: deadline.UnixNano(), Tasks: []protocol.PreemptedTask{
		{TaskID: "a", AgentID: tasks[0].AgentID, Resources: unit(), Reason: protocol.ReasonRevoked},
		{TaskID: "b", AgentID: tasks[1].AgentID, Resources: unit(), Reason: protocol.ReasonPreempted},
	}}
	publishPreemption(t, c, d, sent)

	ev := rec.waitPreemption(t, 1)
	if ev.Withdrawn || ev.Deadline != deadline.UnixNano() || len(ev.Tasks) != 2 ||
		ev.Tasks[0].TaskID != "a" || ev.Tasks[0].Reason != protocol.ReasonRevoked || !ev.Tasks[0].Resources.Equal(unit()) ||
		ev.Tasks[1].TaskID != "b" || ev.Tasks[1].Reason != protocol.ReasonPreempted || ev.Tasks[1].AgentID != tasks[1].AgentID {
		t.Fatalf("got warning %+v, want %+v", ev, sent)
	}
	ws := d.Warned()
	if len(ws) != 2 || ws[0].Task.TaskID != "a" || !ws[0].Deadline.Equal(deadline) || ws[1].Task.Reason != protocol.ReasonPreempted {
		t.Fatalf("warned %+v, want a and b until %v", ws, deadline)
	}

	publishPreemption(t, c, d, protocol.PreemptionEvent{Withdrawn: true, Tasks: sent.Tasks[1:]})
	if ev := rec.waitPreemption(t, 2); !ev.Withdrawn || len(ev.Tasks) != 1 || ev.Tasks[0].TaskID != "b" {
		t.Fatalf("got %+v, want the withdrawal of b", ev)
	}
	if got := warned(d); !slices.Equal(got, []protocol.TaskID{"a"}) {
		t.Fatalf("warned %v after the withdrawal of b, want [a]", got)
	}

	if err := d.Kill(ctxT(t), "a", tasks[0].AgentID, 0); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskKilled)
	if got := warned(d); len(got) != 0 {
		t.Fatalf("warned %v after a ended, want none", got)
	}
}

// TestDriver_PreemptionWithoutHandler: a scheduler without Preempting
// keeps working, and the driver still records the warning.
func TestDriver_PreemptionWithoutHandler(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	d := start(t, c, rec).d
	o := rec.WaitOffer(t, d, 0, nil)
	tasks := launchRunning(t, rec, d, o, "a")
	publishPreemption(t, c, d, protocol.PreemptionEvent{Deadline: time.Now().Add(time.Minute).UnixNano(),
		Tasks: []protocol.PreemptedTask{{TaskID: "a", AgentID: tasks[0].AgentID, Reason: protocol.ReasonAgentDrained}}})
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if got := warned(d); !slices.Equal(got, []protocol.TaskID{"a"}) {
			return fmt.Errorf("warned %v, want [a]", got)
		}
		return nil
	})
	if errs := rec.Errors(); len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
}

// TestWithoutRevocable: the option subscribes with CapNoRevocable, next
// to the other capabilities; a framework without it has no such
// capability.
func TestWithoutRevocable(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	with := start(t, c, newRecorder(), framework.WithoutRevocable(),
		framework.WithCapabilities(protocol.CapGang, protocol.CapNoRevocable)).d
	without := start(t, c, newRecorder(), framework.WithCapabilities(protocol.CapGang)).d
	v := c.WaitForLeader().View()
	f, ok := v.Framework(with.ID())
	if !ok || !f.HasCapability(protocol.CapNoRevocable) || !f.HasCapability(protocol.CapGang) {
		t.Fatalf("framework with WithoutRevocable: %+v, want capabilities %s and %s", f, protocol.CapNoRevocable, protocol.CapGang)
	}
	if g, ok := v.Framework(without.ID()); !ok || g.HasCapability(protocol.CapNoRevocable) {
		t.Fatalf("framework without the option: %+v, want no %s", g, protocol.CapNoRevocable)
	}
}

// TestTaskBuilder_NonPreemptible: the builder marks the task, and the mark
// reaches the master, which refuses it under a role without a guarantee.
func TestTaskBuilder_NonPreemptible(t *testing.T) {
	if framework.NewTask("t", "true").Build().NonPreemptible {
		t.Fatal("a task is non-preemptible by default")
	}
	ti := framework.NewTask("t", "true").Resources(unit()).NonPreemptible().Build()
	if !ti.NonPreemptible {
		t.Fatal("NonPreemptible did not mark the task")
	}
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	d := start(t, c, rec).d
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, ti); !errors.Is(err, protocol.ErrNotPreemptible) {
		t.Fatalf("launch of a non-preemptible task without a guarantee: %v, want %v", err, protocol.ErrNotPreemptible)
	}
}
