package master

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestHTTP_KillTask: an operator's kill reaches the task's agent with
// reason killed_by_operator and the given grace period, and is recorded as
// an operator action; force kills a non-preemptible task. Every refusal
// answers a typed error, sends nothing and leaves the task running: the
// first kill the agent receives is the one that succeeded.
func TestHTTP_KillTask(t *testing.T) {
	t.Parallel()
	o := newOpTest(t)
	fw := string(o.fw)
	kill := func(task string) string { return "/v1/frameworks/" + fw + "/tasks/" + task + "/kill" }
	for _, tc := range []struct {
		name, path, token, body string
		wantCode                int
		wantErr                 protocol.Code
	}{
		{"no token", kill("t1"), "", "", http.StatusUnauthorized, 0},
		{"wrong token", kill("t1"), "nope", "", http.StatusUnauthorized, 0},
		{"unknown framework", "/v1/frameworks/fw-NOSUCH/tasks/t1/kill", "op", "", http.StatusNotFound, protocol.CodeUnknownFramework},
		{"unknown task", kill("t9"), "op", "", http.StatusNotFound, protocol.CodeUnknownTask},
		{"non-preemptible", kill("t2"), "op", `{"grace_period": "1s"}`, http.StatusConflict, protocol.CodeNotPreemptible},
		{"negative grace", kill("t1"), "op", `{"grace_period": "-1s"}`, http.StatusBadRequest, protocol.CodeInvalidArgument},
		{"bad grace", kill("t1"), "op", `{"grace_period": "soon"}`, http.StatusBadRequest, protocol.CodeInvalidArgument},
		{"unknown field", kill("t1"), "op", `{"forced": true}`, http.StatusBadRequest, protocol.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, e, body := o.post(t, tc.path, tc.token, tc.body)
			if code != tc.wantCode || e.Code != tc.wantErr {
				t.Errorf("got %d code %d (%s), want %d code %d", code, e.Code, body, tc.wantCode, tc.wantErr)
			}
		})
	}
	for _, id := range []protocol.TaskID{"t1", "t2"} {
		if st := o.state(id); st != protocol.TaskRunning {
			t.Fatalf("task %s after the refused kills: got %s, want RUNNING", id, st)
		}
	}

	code, _, body := o.post(t, kill("t1"), "op", `{"grace_period": "3s"}`)
	var got api.TaskKill
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil ||
		got.AgentID != o.agent || got.Reason != protocol.ReasonKilledByOperator {
		t.Fatalf("kill t1: %d %s, want 200 with agent %s and reason killed_by_operator", code, body, o.agent)
	}
	first := waitFor(t, o.cmds, protocol.MsgKillCommand, func(protocol.KillCommand) bool { return true })
	want := protocol.KillCommand{FrameworkID: o.fw, TaskID: "t1", GracePeriod: 3 * time.Second, Reason: protocol.ReasonKilledByOperator}
	if first != want {
		t.Fatalf("first kill the agent received: got %+v, want %+v", first, want)
	}
	clusterEvent(t, o.cluster, func(ev protocol.ClusterEvent) bool {
		return ev.Operator != nil && ev.Operator.Action == protocol.OperatorKillTask && ev.Operator.TaskID == "t1" &&
			ev.Operator.AgentID == o.agent && ev.Operator.Detail == "grace 3s"
	})

	if code, _, body := o.post(t, kill("t2"), "op", `{"force": true}`); code != http.StatusOK {
		t.Fatalf("forced kill of t2: %d %s", code, body)
	}
	waitFor(t, o.cmds, protocol.MsgKillCommand, func(k protocol.KillCommand) bool {
		return k.TaskID == "t2" && k.Reason == protocol.ReasonKilledByOperator && k.GracePeriod == 0
	})

	// The agent's KILLED status carries the reason; a kill of an ended
	// task is refused.
	o.report(t, "t1", protocol.TaskKilled, protocol.ReasonKilledByOperator)
	if t1, _ := o.m.View().Task(o.fw, "t1"); t1.State != protocol.TaskKilled || t1.Reason != protocol.ReasonKilledByOperator {
		t.Fatalf("t1: got %s (%s), want KILLED (killed_by_operator)", t1.State, t1.Reason)
	}
	if code, e, body := o.post(t, kill("t1"), "op", ""); code != http.StatusConflict || e.Code != protocol.CodeInvalidArgument {
		t.Fatalf("kill of an ended task: %d %s, want 409 invalid argument", code, body)
	}
}

// TestHTTP_TeardownFramework: the operator removes a framework: its agent
// is told to shut it down and the removal is recorded; an unknown
// framework, or no token, is refused and changes nothing.
func TestHTTP_TeardownFramework(t *testing.T) {
	t.Parallel()
	o := newOpTest(t)
	if code, _, body := o.post(t, "/v1/frameworks/"+string(o.fw)+"/teardown", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("teardown without the token: %d %s, want 401", code, body)
	}
	if code, e, body := o.post(t, "/v1/frameworks/fw-NOSUCH/teardown", "op", ""); code != http.StatusNotFound || e.Code != protocol.CodeUnknownFramework {
		t.Fatalf("teardown of an unknown framework: %d %s, want 404 unknown framework", code, body)
	}
	if _, ok := o.m.View().Framework(o.fw); !ok {
		t.Fatal("a refused teardown removed the framework")
	}
	if n := len(all[protocol.ShutdownFrameworkCommand](o.cmds, protocol.MsgShutdownFrameworkCommand)); n != 0 {
		t.Fatalf("refused teardowns sent %d shutdowns", n)
	}

	code, _, body := o.post(t, "/v1/frameworks/"+string(o.fw)+"/teardown", "op", "")
	var got api.FrameworkTeardown
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil || got.FrameworkID != o.fw || got.State != "removed" {
		t.Fatalf("teardown: %d %s, want 200 removed", code, body)
	}
	if _, ok := o.m.View().Framework(o.fw); ok {
		t.Fatal("the framework is still registered")
	}
	waitFor(t, o.cmds, protocol.MsgShutdownFrameworkCommand, func(c protocol.ShutdownFrameworkCommand) bool { return c.FrameworkID == o.fw })
	clusterEvent(t, o.cluster, func(ev protocol.ClusterEvent) bool {
		return ev.Operator != nil && ev.Operator.Action == protocol.OperatorTeardownFramework && ev.Operator.FrameworkID == o.fw
	})
	if code, e, _ := o.post(t, "/v1/frameworks/"+string(o.fw)+"/teardown", "op", ""); code != http.StatusNotFound || e.Code != protocol.CodeUnknownFramework {
		t.Fatalf("second teardown: %d code %d, want 404 unknown framework", code, e.Code)
	}
}

// TestHTTP_DrainDeadline: a drain with a deadline warns the framework of
// its tasks on the agent at once; past the deadline the leader kills them
// (reason agent_drained, non-preemptible ones too), and once the agent runs
// nothing it is reported drained, once. The checks run by hand at chosen
// times; the deadline is far enough that the leader's own never fires.
func TestHTTP_DrainDeadline(t *testing.T) {
	t.Parallel()
	o := newOpTest(t)
	drain := "/v1/agents/" + string(o.agent) + "/drain"
	for _, tc := range []struct{ name, body string }{
		{"negative", `{"deadline": "-1m"}`},
		{"unparsable", `{"deadline": "tomorrow"}`},
		{"not json", `deadline=1h`},
	} {
		if code, e, body := o.post(t, drain, "op", tc.body); code != http.StatusBadRequest || e.Code != protocol.CodeInvalidArgument {
			t.Errorf("%s deadline: %d %s, want 400 invalid argument", tc.name, code, body)
		}
	}
	if a, _ := o.m.View().Agent(o.agent); a.State != "active" || a.DrainDeadline != 0 {
		t.Fatalf("agent after refused drains: %s, deadline %d; want active without one", a.State, a.DrainDeadline)
	}

	before := time.Now()
	code, _, body := o.post(t, drain, "op", `{"deadline": "1h"}`)
	var st api.AgentState
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil || st.State != "draining" || st.DrainDeadline == nil {
		t.Fatalf("drain: %d %s, want 200 draining with a deadline", code, body)
	}
	a, _ := o.m.View().Agent(o.agent)
	deadline := time.Unix(0, a.DrainDeadline)
	if deadline.Before(before.Add(time.Hour)) || deadline.After(time.Now().Add(time.Hour)) {
		t.Fatalf("replicated drain deadline %s, want an hour from the request", deadline)
	}
	warning := waitFor(t, o.fwEv, protocol.MsgPreemptionEvent, func(protocol.PreemptionEvent) bool { return true })
	if warning.Deadline != a.DrainDeadline || warning.Withdrawn || len(warning.Tasks) != 2 ||
		warning.Tasks[0].Reason != protocol.ReasonAgentDrained || warning.Tasks[0].TaskID != "t1" || warning.Tasks[1].TaskID != "t2" {
		t.Fatalf("warning: got %+v, want t1 and t2, agent_drained, deadline %d", warning, a.DrainDeadline)
	}
	clusterEvent(t, o.cluster, func(ev protocol.ClusterEvent) bool {
		return ev.Operator != nil && ev.Operator.Action == protocol.OperatorDrainAgent && strings.HasPrefix(ev.Operator.Detail, "deadline ")
	})

	l := leaderOf(t, o.m)
	l.checkDrains(deadline.Add(-time.Second)) // not yet
	l.checkDrains(deadline)
	first := waitFor(t, o.cmds, protocol.MsgKillCommand, func(protocol.KillCommand) bool { return true })
	if first.Reason != protocol.ReasonAgentDrained || first.TaskID != "t1" {
		t.Fatalf("first kill: got %+v, want t1 killed for agent_drained at the deadline", first)
	}
	waitFor(t, o.cmds, protocol.MsgKillCommand, func(k protocol.KillCommand) bool {
		return k.TaskID == "t2" && k.Reason == protocol.ReasonAgentDrained
	})
	clusterEvent(t, o.cluster, func(ev protocol.ClusterEvent) bool {
		return ev.Preemption != nil && ev.Preemption.State == protocol.PreemptionKilled && ev.Preemption.TaskID == "t2"
	})
	l.checkDrains(deadline.Add(time.Second)) // within the retry interval: no kill again
	if n := len(all[protocol.KillCommand](o.cmds, protocol.MsgKillCommand)); n != 2 {
		t.Fatalf("%d kills after a second check, want 2", n)
	}

	o.report(t, "t1", protocol.TaskKilled, protocol.ReasonAgentDrained)
	o.report(t, "t2", protocol.TaskKilled, protocol.ReasonAgentDrained)
	l.checkDrains(deadline.Add(2 * time.Second))
	drained := func(ev protocol.ClusterEvent) bool {
		return ev.Agent != nil && ev.Agent.AgentID == o.agent && ev.Agent.State == agentDrained
	}
	clusterEvent(t, o.cluster, drained)
	l.checkDrains(deadline.Add(3 * time.Second))
	var s api.State
	code, _, body = httpTestGet(t, "http://"+o.m.HTTPAddr()+"/v1/state")
	if err := json.Unmarshal(body, &s); code != http.StatusOK || err != nil || len(s.Agents) != 1 || !s.Agents[0].Drained || s.Agents[0].DrainDeadline == nil {
		t.Fatalf("GET /v1/state: %d %s, want the agent drained with its deadline", code, body)
	}
	n := 0
	for _, ev := range all[protocol.ClusterEvent](o.cluster, protocol.MsgClusterEvent) {
		if drained(ev) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the drain was reported %d times, want once", n)
	}

	// Activating lifts the deadline.
	if code, _, body := o.post(t, "/v1/agents/"+string(o.agent)+"/activate", "op", ""); code != http.StatusOK {
		t.Fatalf("activate: %d %s", code, body)
	}
	if a, _ := o.m.View().Agent(o.agent); a.State != "active" || a.DrainDeadline != 0 {
		t.Fatalf("activated agent: %s, deadline %d; want active without one", a.State, a.DrainDeadline)
	}
}

// TestHTTP_DrainDeadlineWithdrawn: draining again without a deadline lifts
// it, and the framework is told its tasks are spared.
func TestHTTP_DrainDeadlineWithdrawn(t *testing.T) {
	t.Parallel()
	o := newOpTest(t)
	drain := "/v1/agents/" + string(o.agent) + "/drain"
	if code, _, body := o.post(t, drain, "op", `{"deadline": "1h"}`); code != http.StatusOK {
		t.Fatalf("drain: %d %s", code, body)
	}
	if code, _, body := o.post(t, drain, "op", ""); code != http.StatusOK {
		t.Fatalf("drain again: %d %s", code, body)
	}
	if a, _ := o.m.View().Agent(o.agent); a.State != "draining" || a.DrainDeadline != 0 {
		t.Fatalf("agent: %s, deadline %d; want draining without one", a.State, a.DrainDeadline)
	}
	waitFor(t, o.fwEv, protocol.MsgPreemptionEvent, func(ev protocol.PreemptionEvent) bool { return ev.Withdrawn && len(ev.Tasks) == 2 })
	clusterEvent(t, o.cluster, func(ev protocol.ClusterEvent) bool {
		return ev.Preemption != nil && ev.Preemption.State == protocol.PreemptionWithdrawn
	})
}

// TestHTTP_TenantCannotAct: on a cluster shared by tenants, a tenant with
// its own credential (and no operator token) can neither kill another
// tenant's task, tear its framework down nor drain an agent; nothing is
// sent and nothing changes.
func TestHTTP_TenantCannotAct(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, func(c *Config) {
		c.HTTPAddr, c.OperatorToken, c.NATS.MasterSecret = "127.0.0.1:0", "op", "ms"
		c.Credentials = map[string]string{"alice": "a-secret", "bob": "b-secret"}
	})
	agent := registerTestAgent(t, nc)
	inbox := &offerInbox{}
	bob := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "bob", Role: "eng", Principal: "bob", FailoverTimeout: time.Hour}, inbox.receive)
	launchOnFirstOffer(t, nc, bob.FrameworkID, inbox, agent.AgentID, "t1")
	cmdSubject, err := protocol.Subjects{Prefix: "allot"}.AgentCmd("", agent.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	cmds := record(t, nc, cmdSubject)
	for _, path := range []string{
		"/v1/frameworks/" + string(bob.FrameworkID) + "/tasks/t1/kill",
		"/v1/frameworks/" + string(bob.FrameworkID) + "/teardown",
		"/v1/agents/" + string(agent.AgentID) + "/drain",
	} {
		for _, who := range []struct{ user, secret string }{{"alice", "a-secret"}, {"bob", "b-secret"}, {"operator", "a-secret"}} {
			req, err := http.NewRequest(http.MethodPost, "http://"+m.HTTPAddr()+path, strings.NewReader(`{"force": true}`))
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth(who.user, who.secret)
			if code, _, body := httpTestDo(t, req); code != http.StatusUnauthorized {
				t.Errorf("POST %s as %s: %d %s, want 401", path, who.user, code, body)
			}
		}
	}
	if _, ok := m.View().Framework(bob.FrameworkID); !ok {
		t.Error("bob's framework was removed")
	}
	if a, _ := m.View().Agent(agent.AgentID); a.State != "active" {
		t.Errorf("agent: got %s, want active", a.State)
	}
	if tk, ok := m.View().Task(bob.FrameworkID, "t1"); !ok || tk.Terminal() {
		t.Fatalf("bob's task: %+v, want it live", tk)
	}
	// The operator's kill is the first command the agent receives: the
	// refusals sent nothing.
	if code, body := httpTestPost(t, "http://"+m.HTTPAddr()+"/v1/frameworks/"+string(bob.FrameworkID)+"/tasks/t1/kill", "op"); code != http.StatusOK {
		t.Fatalf("the operator's kill: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		cmds.mu.Lock()
		defer cmds.mu.Unlock()
		if len(cmds.envs) == 0 {
			return errors.New("no command yet")
		}
		var k protocol.KillCommand
		if cmds.envs[0].Type != protocol.MsgKillCommand || protocol.DecodeBody(cmds.envs[0], &k) != nil || k.Reason != protocol.ReasonKilledByOperator {
			return fmt.Errorf("first command: %s, want the operator's kill", cmds.envs[0].Type)
		}
		return nil
	})
}
