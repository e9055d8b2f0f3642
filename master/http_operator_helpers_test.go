package master

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// recorder keeps, in arrival order, the messages on one subject: an
// agent's commands, a framework's events or the cluster events.
type recorder struct {
	mu   sync.Mutex
	envs []protocol.Envelope
}

func record(t *testing.T, nc *nats.Conn, subject string) *recorder {
	t.Helper()
	r := &recorder{}
	sub, err := nc.Subscribe(subject, func(msg *nats.Msg) {
		if env, err := protocol.Decode(msg.Data); err == nil {
			r.mu.Lock()
			r.envs = append(r.envs, env)
			r.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

// all decodes every recorded message of type typ.
func all[T any](r *recorder, typ protocol.MsgType) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, env := range r.envs {
		var v T
		if env.Type == typ && protocol.DecodeBody(env, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// waitFor waits until a message of type typ that match accepts arrived,
// and returns it.
func waitFor[T any](t *testing.T, r *recorder, typ protocol.MsgType, match func(T) bool) T {
	t.Helper()
	var got T
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		for _, v := range all[T](r, typ) {
			if match(v) {
				got = v
				return nil
			}
		}
		return fmt.Errorf("no matching %s among %d messages", typ, len(all[T](r, typ)))
	})
	return got
}

// clusterEvent waits for a cluster event match accepts.
func clusterEvent(t *testing.T, r *recorder, match func(protocol.ClusterEvent) bool) protocol.ClusterEvent {
	t.Helper()
	return waitFor(t, r, protocol.MsgClusterEvent, match)
}

// opTest is a leading master with the operator token "op" and its HTTP
// API, an agent whose commands are recorded, and a framework in role eng
// (guaranteed the agent's CPU) whose events are recorded, running task t1
// and the non-preemptible task t2 on the agent.
type opTest struct {
	m       *Master
	nc      *nats.Conn
	agent   protocol.AgentID
	fw      protocol.FrameworkID
	cmds    *recorder
	fwEv    *recorder
	cluster *recorder
}

func newOpTest(t *testing.T) *opTest {
	t.Helper()
	m, nc := operatorTestMaster(t, "op")
	if code, body := httpTestPut(t, "http://"+m.HTTPAddr()+"/v1/roles/eng", "op", `{"guarantee": {"cpus": 1000, "mem": 1000}}`); code != http.StatusOK {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	subj := protocol.Subjects{Prefix: "allot"}
	o := &opTest{m: m, nc: nc, cluster: record(t, nc, subj.Events())}
	o.agent = registerTestAgent(t, nc).AgentID
	cmdSubject, err := subj.AgentCmd("", o.agent)
	if err != nil {
		t.Fatal(err)
	}
	o.cmds = record(t, nc, cmdSubject)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	o.fw = fw.FrameworkID
	events, err := subj.FrameworkEvents("", o.fw)
	if err != nil {
		t.Fatal(err)
	}
	o.fwEv = record(t, nc, events)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest, protocol.ReviveRequest{FrameworkID: o.fw}, nil)
	offer := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	task := func(id protocol.TaskID, nonPreemptible bool) protocol.TaskInfo {
		return protocol.TaskInfo{TaskID: id, AgentID: o.agent, Resources: protocol.Scalars(map[string]int64{"cpus": 100, "mem": 100}),
			Command: protocol.CommandInfo{Shell: true, Value: "sleep 1000"}, NonPreemptible: nonPreemptible}
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
		FrameworkID: o.fw, OfferIDs: []protocol.OfferID{offer.ID},
		Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{task("t1", false), task("t2", true)}}},
	}, nil)
	o.report(t, "t1", protocol.TaskRunning, "")
	o.report(t, "t2", protocol.TaskRunning, "")
	return o
}

// report has the agent report a status of task id.
func (o *opTest) report(t *testing.T, id protocol.TaskID, st protocol.TaskState, reason string) {
	t.Helper()
	uuid := protocol.StatusUUID(protocol.NewID("u"))
	httpTestRequest(t, o.nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
		AgentID: o.agent, Updates: []protocol.StatusUpdate{{UUID: uuid, Status: protocol.TaskStatus{
			TaskID: id, FrameworkID: o.fw, AgentID: o.agent, State: st, Reason: reason, UUID: uuid}}},
	}, nil)
}

// leaderOf is m's leader, which must be serving.
func leaderOf(t *testing.T, m *Master) *leader {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leader == nil {
		t.Fatal("no leader")
	}
	return m.leader
}

// state is the replicated state of task id.
func (o *opTest) state(id protocol.TaskID) protocol.TaskState {
	t, ok := o.m.View().Task(o.fw, id)
	if !ok {
		return ""
	}
	return t.State
}

// post sends an operator action with a JSON body and the token, and
// decodes an error answer.
func (o *opTest) post(t *testing.T, path, token, body string) (int, api.Error, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+o.m.HTTPAddr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, _, data := httpTestDo(t, req)
	var e api.Error
	if code != http.StatusOK {
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("POST %s: %d %s: not an error body: %v", path, code, data, err)
		}
	}
	return code, e, data
}
