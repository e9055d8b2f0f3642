package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// withOperatorToken gives every master the operator token "op".
func withOperatorToken(_ int, cfg *master.Config) { cfg.OperatorToken = "op" }

// opClient is a client of the cluster's masters, with token (none: "").
func opClient(t *testing.T, c *testcluster.Cluster, token string) *api.Client {
	t.Helper()
	cl, err := api.NewClient(c.HTTPAddrs(), api.WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// runningTasks starts a framework that runs n one-CPU tasks until they
// are killed, and waits until they all run.
func runningTasks(t *testing.T, c *testcluster.Cluster, name string, n int) *testcluster.TestFramework {
	t.Helper()
	fw := c.NewFramework(testcluster.FrameworkOptions{
		Name:       name,
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: int64(n)}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.RunUntilKilled(), Max: n},
	})
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		running := 0
		for _, ft := range fw.Tasks() {
			if ft.Seen(protocol.TaskRunning) && !ft.Terminal() {
				running++
			}
		}
		if running < n {
			return fmt.Errorf("%d of %d tasks running", running, n)
		}
		return nil
	})
	return fw
}

// lastStatus is the latest status the framework received for task id.
func lastStatus(fw *testcluster.TestFramework, id protocol.TaskID) protocol.TaskStatus {
	sts := fw.Statuses(id)
	if len(sts) == 0 {
		return protocol.TaskStatus{}
	}
	return sts[len(sts)-1]
}

// waitEnded waits until task id of fw ended in KILLED with reason.
func waitEnded(t *testing.T, fw *testcluster.TestFramework, id protocol.TaskID, reason string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if st := lastStatus(fw, id); st.State != protocol.TaskKilled || st.Reason != reason {
			return fmt.Errorf("task %s: last status %s (%s), want KILLED (%s)", id, st.State, st.Reason, reason)
		}
		return nil
	})
}

// TestCluster_OperatorKillAndTeardown: the operator kills one task (it
// ends KILLED, killed_by_operator, at its framework) and tears the
// framework down (its other task is shut down on the agent, and the
// framework is gone); without the token both are refused and change
// nothing.
func TestCluster_OperatorKillAndTeardown(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Agents: 1, Configure: withOperatorToken})
	fw := runningTasks(t, c, "victim", 2)
	tasks := fw.Tasks()
	first, second := tasks[0].Info.TaskID, tasks[1].Info.TaskID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	anon := opClient(t, c, "")
	if _, err := anon.KillTask(ctx, fw.ID(), first, false, 0); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("kill without the token: got %v, want unauthorized", err)
	}
	if _, err := anon.TeardownFramework(ctx, fw.ID()); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("teardown without the token: got %v, want unauthorized", err)
	}
	op := opClient(t, c, "op")
	if _, err := op.KillTask(ctx, fw.ID(), "no-such-task", false, 0); !errors.Is(err, protocol.ErrUnknownTask) || !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("kill of an unknown task: got %v, want unknown task (404)", err)
	}
	if _, err := op.TeardownFramework(ctx, "fw-NOSUCH"); !errors.Is(err, protocol.ErrUnknownFramework) {
		t.Fatalf("teardown of an unknown framework: got %v, want unknown framework", err)
	}
	for _, id := range []protocol.TaskID{first, second} {
		if st := lastStatus(fw, id); st.State != protocol.TaskRunning {
			t.Fatalf("task %s after refused actions: %s, want RUNNING", id, st.State)
		}
	}

	got, err := op.KillTask(ctx, fw.ID(), first, false, time.Second)
	if err != nil || got.Reason != protocol.ReasonKilledByOperator {
		t.Fatalf("kill: got %+v, %v", got, err)
	}
	waitEnded(t, fw, first, protocol.ReasonKilledByOperator)
	if st := lastStatus(fw, second); st.State != protocol.TaskRunning {
		t.Fatalf("the other task: %s, want RUNNING", st.State)
	}

	if _, err := op.TeardownFramework(ctx, fw.ID()); err != nil {
		t.Fatal(err)
	}
	ag := c.Agents()[0]
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := running(ag); n != 0 {
			return fmt.Errorf("the agent still runs %d tasks", n)
		}
		if _, ok := c.WaitForLeader().View().Framework(fw.ID()); ok {
			return errors.New("the framework is still registered")
		}
		return nil
	})
}

// eventLog records, in order, the message types on a framework's event
// subject, and the preemption warnings.
type eventLog struct {
	mu       sync.Mutex
	order    []protocol.MsgType
	warnings []protocol.PreemptionEvent
}

func watchFramework(t *testing.T, c *testcluster.Cluster, fw protocol.FrameworkID) *eventLog {
	t.Helper()
	f, ok := c.WaitForLeader().View().Framework(fw)
	if !ok {
		t.Fatalf("framework %s unknown", fw)
	}
	subject, err := c.Subjects().FrameworkEvents(f.Principal, fw)
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	nc := c.Connect("watcher")
	if _, err := nc.Subscribe(subject, func(msg *nats.Msg) {
		env, err := protocol.Decode(msg.Data)
		if err != nil {
			return
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		log.order = append(log.order, env.Type)
		var ev protocol.PreemptionEvent
		if env.Type == protocol.MsgPreemptionEvent && protocol.DecodeBody(env, &ev) == nil {
			log.warnings = append(log.warnings, ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestCluster_DrainDeadline: a drain with a deadline warns the framework
// of its tasks on the agent first; the leader elected after the one that
// started the drain kills them at the deadline (KILLED, agent_drained),
// and the agent is then reported drained. A negative deadline is refused
// and leaves the other agent active.
func TestCluster_DrainDeadline(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Agents: 1, AgentResources: agentResources(2), Configure: withOperatorToken})
	fw := runningTasks(t, c, "drained", 2)
	log := watchFramework(t, c, fw.ID())
	ag := c.Agents()[0]
	other := c.NewAgent(testcluster.AgentOptions{Resources: agentResources(1)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op := opClient(t, c, "op")

	// A negative deadline, over plain HTTP (the client refuses one itself).
	url := "http://" + c.WaitForLeader().HTTPAddr() + "/v1/agents/" + string(other.ID()) + "/drain"
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"deadline": "-5m"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer op")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("drain with a negative deadline: %d, want 400", resp.StatusCode)
	}
	if a, _ := c.WaitForLeader().View().Agent(other.ID()); a.State != "active" {
		t.Fatalf("the other agent: %s, want active", a.State)
	}

	st, err := op.DrainAgentWithin(ctx, ag.ID(), 2*time.Second)
	if err != nil || st.State != "draining" || st.DrainDeadline == nil {
		t.Fatalf("drain: got %+v, %v; want draining with a deadline", st, err)
	}
	c.KillLeader()
	c.WaitForLeader()

	for _, ft := range fw.Tasks() {
		waitEnded(t, fw, ft.Info.TaskID, protocol.ReasonAgentDrained)
	}
	log.mu.Lock()
	warnings, order := log.warnings, log.order
	log.mu.Unlock()
	if len(warnings) != 1 || len(warnings[0].Tasks) != 2 || warnings[0].Tasks[0].Reason != protocol.ReasonAgentDrained {
		t.Fatalf("warnings: got %+v, want one naming both tasks", warnings)
	}
	for _, typ := range order {
		if typ == protocol.MsgStatusUpdateEvent {
			t.Fatalf("a status update reached the framework before the warning: %v", order)
		}
		if typ == protocol.MsgPreemptionEvent {
			break
		}
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		s, err := op.State(ctx)
		if err != nil {
			return err
		}
		for _, a := range s.Agents {
			if a.ID == ag.ID() && a.Drained {
				return nil
			}
		}
		return fmt.Errorf("agent %s not reported drained: %+v", ag.ID(), s.Agents)
	})
	if a, _ := c.WaitForLeader().View().Agent(other.ID()); a.State != "active" {
		t.Fatalf("the other agent: %s, want active", a.State)
	}
}
