package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestIsolation and TestIsolation_MutualTLS try, as a hostile tenant
// (alice, holding only her own credential) would, every way to reach
// another tenant (bob) or the cluster past the masters: sniffing,
// commands straight to an agent, calls for bob's framework, forged agent
// calls, a forged leader, forged events, reading bob's sandbox, an
// oversized request. Each attack must change nothing (no process runs,
// the replicated state and bob's tasks are as they were, no secret is
// seen) while bob carries on. The first runs with passwords, the second
// over mutual TLS where each identity is its certificate.
func TestIsolation(t *testing.T) {
	t.Parallel()
	runIsolation(t, newTenantCluster(t, false))
}

func TestIsolation_MutualTLS(t *testing.T) {
	t.Parallel()
	runIsolation(t, newTenantCluster(t, true))
}

func runIsolation(t *testing.T, tc *tenantCluster) {
	for i, attack := range []struct {
		name string
		run  func(*testing.T, *tenantCluster)
	}{
		{"sniffing", attackSniff},
		{"direct launch and kill", attackAgentCommands},
		{"calls for another's framework", attackForeignFramework},
		{"forged agent calls", attackAgentForgery},
		{"forged leader", attackLeaderForgery},
		{"forged events", attackEventForgery},
		{"sandbox read across frameworks", attackSandboxRead},
		{"oversized request", attackOversized},
		{"heartbeats for a stopped agent", attackHeartbeatForStopped},
	} {
		t.Run(attack.name, func(t *testing.T) {
			attack.run(t, tc)
			tc.bobCarriesOn(t, "attack"+strconv.Itoa(i))
		})
	}
}

// attackSniff: alice subscribes to everything she could learn bob's
// secrets from; the servers refuse every subscription, and while bob
// launches a task whose environment holds his secret, nothing reaches
// her.
func attackSniff(t *testing.T, tc *tenantCluster) {
	subjects := []string{">", "allot.>", "allot.fw.bob.>", "allot.fw.*.*.events", "allot.agent.>",
		"allot.events", "allot.inbox.framework.bob.>", "_INBOX.>", "allot.api.>", "allot.leader.>"}
	got := make(chan *nats.Msg, 1024)
	before := tc.alice.violationCount()
	for _, s := range subjects {
		sub, err := tc.alice.nc.ChanSubscribe(s, got)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := tc.alice.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	tc.alice.refused(t, before+len(subjects), subjects...)
	task := shTask("bob-sniffed", `echo "$BOB_SECRET" | wc -c`)
	task.Command.Env = map[string]string{"BOB_SECRET": tc.bobSecret}
	tc.bob.launch(t, tc.agents[1].ID(), task)
	tc.bob.rec.WaitState(t, "bob-sniffed", protocol.TaskFinished)
	if err := tc.alice.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := len(got); n != 0 {
		msg := <-got
		t.Fatalf("alice received %d messages, the first on %s (%d bytes)", n, msg.Subject, len(msg.Data))
	}
}

// attackAgentCommands: alice publishes a launch (as bob's framework,
// running a command that would leave a file) and a kill of bob's task
// straight to an agent's command subject, stamped with the current term.
func attackAgentCommands(t *testing.T, tc *tenantCluster) {
	e := tc.agents[0]
	marker := filepath.Join(t.TempDir(), "pwned")
	subject := agentCmdSubject(t, tc, e.ID())
	header := nats.Header{}
	header.Set(protocol.TermHeader, strconv.FormatUint(tc.c.WaitForLeader().Raft().Term(), 10))
	before := tc.alice.violationCount()
	tc.alice.publish(t, subject, protocol.MsgLaunchCommand, protocol.LaunchCommand{FrameworkID: tc.bob.d.ID(),
		Tasks: []protocol.TaskInfo{{TaskID: "alice-direct", AgentID: e.ID(), Resources: unitTask(),
			Command: protocol.CommandInfo{Shell: true, Value: "id > " + marker}}}}, header)
	tc.alice.publish(t, subject, protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: tc.bob.d.ID(), TaskID: bobLong}, header)
	tc.alice.refused(t, before+2, subject)
	// bob's next task runs on that agent: it took commands after these.
	tc.bobCarriesOn(t, "after-direct-commands")
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the launched command ran: %v", err)
	}
	if _, ok := agentTask(e, tc.bob.d.ID(), "alice-direct"); ok {
		t.Fatal("the agent has alice's task")
	}
	if n := tasksNamed(tc.state(t), "alice-direct"); n != 0 {
		t.Fatalf("the state holds %d of alice's tasks", n)
	}
}

// attackForeignFramework: alice calls for bob's framework, on bob's
// subjects (the servers drop it) and on her own (the leader refuses it
// before decoding): take it over and get its files token, launch, kill,
// tear it down.
func attackForeignFramework(t *testing.T, tc *tenantCluster) {
	bobFW := tc.bob.d.ID()
	before := tc.alice.violationCount()
	session := tc.c.WaitForLeader().View()
	f, _ := session.Framework(bobFW)
	accept := protocol.AcceptRequest{FrameworkID: bobFW, OfferIDs: []protocol.OfferID{"of-forged"},
		Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{{TaskID: "alice-as-bob",
			AgentID: tc.agents[0].ID(), Resources: unitTask(), Command: protocol.CommandInfo{Shell: true, Value: "true"}}}}}}
	onBobs, err := protocol.Subjects{}.RequestSubject("bob", accept)
	if err != nil {
		t.Fatal(err)
	}
	tc.alice.publish(t, onBobs, protocol.MsgAcceptRequest, accept, nil)
	tc.alice.refused(t, before+1, onBobs)
	var reply protocol.SubscribeReply
	for name, body := range map[string]any{
		"take it over": protocol.SubscribeRequest{FrameworkID: bobFW, Name: "bob", Principal: "alice", Role: "research"},
		"launch":       accept,
		"kill":         protocol.KillRequest{FrameworkID: bobFW, TaskID: bobLong},
		"tear it down": protocol.TeardownRequest{FrameworkID: bobFW},
	} {
		if err := tc.alice.call(t, "alice", body, &reply); !errors.Is(err, protocol.ErrUnauthorized) {
			t.Errorf("%s: %v, want ErrUnauthorized", name, err)
		}
	}
	if reply.FilesToken != "" || reply.FrameworkID != "" {
		t.Fatalf("a refused subscribe answered %+v", reply)
	}
	now, ok := tc.c.WaitForLeader().View().Framework(bobFW)
	if !ok || now.Session != f.Session || now.Principal != "bob" {
		t.Fatalf("bob's framework after the calls: %+v, want session %d of bob", now, f.Session)
	}
	if n := tasksNamed(tc.state(t), "alice-as-bob"); n != 0 {
		t.Fatalf("the state holds %d tasks launched as bob", n)
	}
}

// attackAgentForgery: alice forges every agent call (a FAILED status for
// bob's task, the registration of a 64-core agent, a heartbeat, a report
// completing bob's shuffle); the servers drop them all. An agent's own
// credential cannot act as another agent, nor register a second agent.
func attackAgentForgery(t *testing.T, tc *tenantCluster) {
	e0, e1 := tc.agents[0], tc.agents[1]
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	flows := []protocol.FlowSpec{{Src: e0.ID(), Dst: e1.ID(), Transfers: 1}}
	if err := tc.bob.d.RegisterCoflow(ctx, "bob-shuffle", flows); err != nil {
		t.Fatal(err)
	}
	agentsBefore := len(tc.state(t).Agents)
	status := protocol.StatusUpdateRequest{AgentID: e0.ID(), Updates: []protocol.StatusUpdate{{UUID: protocol.NewStatusUUID(),
		Status: protocol.TaskStatus{TaskID: bobLong, FrameworkID: tc.bob.d.ID(), AgentID: e0.ID(), State: protocol.TaskFailed}}}}
	forged := map[string]protocol.AgentCall{
		"status":        status,
		"heartbeat":     protocol.HeartbeatRequest{AgentID: e1.ID()},
		"coflow report": protocol.CoflowReportRequest{AgentID: e0.ID(), Flows: []protocol.FlowProgress{{FrameworkID: tc.bob.d.ID(), CoflowID: "bob-shuffle", Src: e0.ID(), Dst: e1.ID(), BytesSent: 1, Transfers: 1, Done: true}}},
	}
	before := tc.alice.violationCount()
	var subjects []string
	for _, body := range forged {
		// On the agent's own subjects.
		subject := agentAPISubject(t, tc, body)
		subjects = append(subjects, subject)
		typ, _ := protocol.TypeOf(body)
		tc.alice.publish(t, subject, typ, body, nil)
	}
	register, err := protocol.Subjects{}.APIAgent("alice", "", protocol.VerbRegister)
	if err != nil {
		t.Fatal(err)
	}
	tc.alice.publish(t, register, protocol.MsgRegisterRequest, protocol.RegisterRequest{Hostname: "fake",
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 64000, protocol.ResMem: 1 << 20})}, nil)
	tc.alice.refused(t, before+len(forged)+1, append(subjects, register)...)

	// Agent e1's own credential: it may act as e1 only, and hold no
	// second agent.
	p1 := agentPrincipal(t, tc, e1.ID())
	agent1 := tc.connectAs(t, protocol.Identity{Kind: protocol.KindAgent, Name: p1})
	statusOn1, err := protocol.Subjects{}.APIAgent(p1, e0.ID(), protocol.VerbStatus)
	if err != nil {
		t.Fatal(err)
	}
	if err := agent1.callSubject(t, statusOn1, status, nil); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Errorf("agent %s reporting for agent %s: %v, want ErrUnauthorized", p1, e0.ID(), err)
	}
	if err := agent1.call(t, p1, protocol.RegisterRequest{Hostname: "second", Resources: agentResources(64)}, nil); !errors.Is(err, protocol.ErrLimitExceeded) {
		t.Errorf("a second agent of credential %s: %v, want ErrLimitExceeded", p1, err)
	}
	st := tc.state(t)
	if n := len(st.Agents); n != agentsBefore {
		t.Fatalf("%d agents registered, want %d", n, agentsBefore)
	}
	for _, task := range st.Tasks {
		if task.TaskID == bobLong && task.State != protocol.TaskRunning {
			t.Fatalf("bob's long task is %s in the state", task.State)
		}
	}
	cf := coflowOf(t, tc, "bob-shuffle")
	if cf.FlowsLeft != 1 {
		t.Fatalf("bob's coflow after forged reports: %d flows left, want 1", cf.FlowsLeft)
	}
}

// attackLeaderForgery: alice announces herself as the leader of a later
// term; the servers drop it, no master redirects to her, and an operator
// action reaches the real leader while her listener hears nothing.
func attackLeaderForgery(t *testing.T, tc *tenantCluster) {
	rogue := newListener(t)
	leader := tc.c.WaitForLeader()
	before := tc.alice.violationCount()
	tc.alice.publish(t, "allot.leader", protocol.MsgLeaderAnnouncement, protocol.LeaderAnnouncement{
		ID: leader.ID(), Term: leader.Raft().Term() + 100, HTTPAddr: strings.TrimPrefix(rogue.srv.URL, "http://")}, nil)
	tc.alice.refused(t, before+1, "allot.leader")
	for _, m := range tc.c.Masters() {
		if m == leader {
			continue
		}
		resp, err := http.Get("http://" + m.HTTPAddr() + "/v1/leader")
		if err != nil {
			t.Fatal(err)
		}
		var info api.Leader
		err = decodeJSON(resp, &info)
		if err != nil || info.LeaderHTTPAddr != leader.HTTPAddr() {
			t.Fatalf("follower %s names the leader at %q (%v), want %s", m.ID(), info.LeaderHTTPAddr, err, leader.HTTPAddr())
		}
	}
	op := tc.operator(t)
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	if _, err := op.DrainAgent(ctx, tc.agents[1].ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := op.ActivateAgent(ctx, tc.agents[1].ID()); err != nil {
		t.Fatal(err)
	}
	if n := rogue.requests.Load(); n != 0 || rogue.creds.Load() {
		t.Fatalf("the forged leader got %d requests (credentials: %v)", n, rogue.creds.Load())
	}
}

// attackEventForgery: alice publishes on bob's event subject a KILLED
// status for his long task and a heartbeat of a newer session, which
// would stop his driver; the servers drop both.
func attackEventForgery(t *testing.T, tc *tenantCluster) {
	subject, err := protocol.Subjects{}.FrameworkEvents("bob", tc.bob.d.ID())
	if err != nil {
		t.Fatal(err)
	}
	before := tc.alice.violationCount()
	tc.alice.publish(t, subject, protocol.MsgStatusUpdateEvent, protocol.StatusUpdateEvent{Status: protocol.TaskStatus{
		TaskID: bobLong, FrameworkID: tc.bob.d.ID(), State: protocol.TaskKilled}}, nil)
	newer := nats.Header{}
	newer.Set(protocol.SessionHeader, protocol.FormatSession(1000))
	tc.alice.publish(t, subject, protocol.MsgHeartbeatEvent, protocol.HeartbeatEvent{}, newer)
	tc.alice.refused(t, before+2, subject)
	select {
	case <-tc.bob.done:
		t.Fatalf("bob's driver stopped: %v", tc.bob.err)
	default:
	}
}

// attackSandboxRead: alice's own task, on bob's long task's agent, tries
// to list the sandboxes and read bob's secret file; her files token tries
// the file server; and she tries to run a task as root or as bob's user.
func attackSandboxRead(t *testing.T, tc *tenantCluster) {
	requireUsers(t)
	e := tc.agents[0]
	alice := tc.tenant(t, "alice", aliceUser, "research")
	bobSandbox := sandboxOf(t, e, tc.bob.d.ID(), bobLong)
	script := fmt.Sprintf(`cat "$ALLOT_SANDBOX/../%s/secret"; echo "cat=$?"; ls "$ALLOT_SANDBOX/.."; echo "ls=$?"; id -u`, bobSandbox)
	alice.launch(t, e.ID(), shTask("alice-reader", script))
	alice.rec.WaitState(t, "alice-reader", protocol.TaskFinished)
	out := readSandbox(t, e, sandboxOf(t, e, alice.d.ID(), "alice-reader"), "stdout")
	if strings.Contains(out, tc.bobSecret) || !strings.Contains(out, "cat=1") || strings.Contains(out, "ls=0") ||
		strings.Contains(out, bobSandbox) || !strings.Contains(out, "65534") {
		t.Fatalf("alice's task read:\n%s\nwant neither bob's secret nor the sandbox list, as uid 65534", out)
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+e.Agent().HTTPAddr()+"/v1/files/read?path="+bobSandbox+"/secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+alice.d.FilesToken())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("alice's files token reading bob's sandbox: %s, want 403", resp.Status)
	}
	for _, u := range []string{"root", bobUser} {
		task := shTask("alice-as-"+u, "id > /dev/null")
		task.Command.User = u
		task.AgentID = e.ID()
		o := alice.offerOn(t, e.ID(), task.Resources)
		if err := alice.d.Launch(sdkCtx(t), []protocol.OfferID{o.ID}, task); !errors.Is(err, protocol.ErrUnauthorized) {
			t.Fatalf("alice launching as %s: %v, want ErrUnauthorized", u, err)
		}
	}
	if n := tasksNamed(tc.state(t), "alice-as-"); n != 0 {
		t.Fatalf("the state holds %d of alice's tasks as other users", n)
	}
	// Alice's framework, with no task, would take every offer first (the
	// lower share): it goes, so bob is offered what he needs from now on.
	if err := alice.d.Teardown(sdkCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// attackOversized: a client without a credential does not get in at all;
// alice's accept of 60,000 tasks for bob's framework, six times what an
// accept may hold, is refused as unauthorized: before it is decoded.
func attackOversized(t *testing.T, tc *tenantCluster) {
	if nc, err := nats.Connect(tc.c.NATSURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a client without a credential connected")
	}
	tasks := make([]protocol.TaskInfo, 60_000)
	for i := range tasks {
		tasks[i] = protocol.TaskInfo{TaskID: protocol.TaskID("t" + strconv.Itoa(i))}
	}
	accept := protocol.AcceptRequest{FrameworkID: tc.bob.d.ID(), OfferIDs: []protocol.OfferID{"of-x"},
		Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: tasks}}}
	start := time.Now()
	if err := tc.alice.call(t, "alice", accept, nil); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("an oversized accept for bob's framework: %v, want ErrUnauthorized", err)
	}
	t.Logf("refused in %s", time.Since(start))
}

// attackHeartbeatForStopped: an agent stops; alice heartbeats for it
// every 100 ms, and it becomes unreachable all the same; started again it
// comes back.
func attackHeartbeatForStopped(t *testing.T, tc *tenantCluster) {
	e := tc.agents[1]
	id := e.ID()
	subject := agentAPISubject(t, tc, protocol.HeartbeatRequest{AgentID: id})
	e.Stop()
	before := tc.alice.violationCount()
	beats := 0
	testutil.WaitFor(t, sdkWait, 100*time.Millisecond, func() error {
		tc.alice.publish(t, subject, protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: id}, nil)
		beats++
		a, ok := tc.c.WaitForLeader().View().Agent(id)
		if !ok || a.State != "unreachable" {
			return fmt.Errorf("agent %s is %+v", id, a)
		}
		return nil
	})
	tc.alice.refused(t, before+beats, subject)
	e.Start()
	testutil.WaitFor(t, sdkWait, 20*time.Millisecond, func() error {
		if a, ok := tc.c.WaitForLeader().View().Agent(id); !ok || a.State != "active" {
			return fmt.Errorf("agent %s is %+v after its restart", id, a)
		}
		return nil
	})
}
