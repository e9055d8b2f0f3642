package master

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// priorityInbox keeps the last coflow priorities an agent was sent.
type priorityInbox struct {
	mu   sync.Mutex
	last *protocol.CoflowPrioritiesCommand
}

func (p *priorityInbox) receive(msg *nats.Msg) {
	cmd, ok := decodeEvent[protocol.CoflowPrioritiesCommand](msg, protocol.MsgCoflowPrioritiesCommand)
	if !ok {
		return
	}
	p.mu.Lock()
	p.last = &cmd
	p.mu.Unlock()
}

func (p *priorityInbox) wait(t *testing.T, want string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		got := "none"
		if p.last != nil {
			got = ""
			for _, e := range p.last.Priorities {
				got += fmt.Sprintf("[%d %s/%s>%s]", e.Rank, e.FrameworkID, e.CoflowID, e.Dst)
			}
		}
		if got != want {
			return fmt.Errorf("agent's priorities %q, want %q", got, want)
		}
		return nil
	})
}

// TestMaster_Coflows runs a coflow through the master's API: a framework
// registers a shuffle, the sending agent is told its order, reports the
// flow's transfers, and the coflow completes; bad requests are refused
// with typed errors and change nothing.
func TestMaster_Coflows(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, func(c *Config) { c.HTTPAddr = "127.0.0.1:0" })
	subj := protocol.Subjects{Prefix: "allot"}
	a1, a2 := registerTestAgent(t, nc).AgentID, registerTestAgent(t, nc).AgentID
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "mr", Principal: "p", Role: "eng"}, func(*nats.Msg) {}).FrameworkID
	inbox := &priorityInbox{}
	cmds, err := subj.AgentCmd("", a1)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.Subscribe(cmds, inbox.receive)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	register := func(r protocol.CoflowRegisterRequest) error {
		return apiTestCall(t, nc, viaBody, protocol.MsgCoflowRegisterRequest, r, nil)
	}
	report := func(r protocol.CoflowReportRequest) error {
		return apiTestCall(t, nc, viaBody, protocol.MsgCoflowReportRequest, r, nil)
	}
	shuffle := []protocol.FlowSpec{{Src: a1, Dst: a2, Transfers: 2}}
	for _, c := range []struct {
		name string
		err  error
		req  protocol.CoflowRegisterRequest
	}{
		{"unknown framework", protocol.ErrUnknownFramework, protocol.CoflowRegisterRequest{FrameworkID: "fw-forged", CoflowID: "s", Flows: shuffle}},
		{"unknown agent", protocol.ErrUnknownAgent, protocol.CoflowRegisterRequest{FrameworkID: fw, CoflowID: "s", Flows: []protocol.FlowSpec{{Src: a1, Dst: "ag-nowhere", Transfers: 1}}}},
		{"no size", protocol.ErrInvalidArgument, protocol.CoflowRegisterRequest{FrameworkID: fw, CoflowID: "s", Flows: []protocol.FlowSpec{{Src: a1, Dst: a2}}}},
	} {
		if err := register(c.req); !errors.Is(err, c.err) {
			t.Fatalf("%s: got %v, want %v", c.name, err, c.err)
		}
	}
	if err := report(protocol.CoflowReportRequest{AgentID: "ag-nowhere"}); !errors.Is(err, protocol.ErrUnknownAgent) {
		t.Fatalf("report from an unknown agent: got %v, want ErrUnknownAgent", err)
	}
	if got := getCoflows(t, m); len(got.Coflows) != 0 {
		t.Fatalf("refused requests left coflows: %+v", got)
	}

	if err := register(protocol.CoflowRegisterRequest{FrameworkID: fw, CoflowID: "s", Flows: shuffle}); err != nil {
		t.Fatal(err)
	}
	inbox.wait(t, fmt.Sprintf("[0 %s/s>%s]", fw, a2))
	if got := getCoflows(t, m); len(got.Coflows) != 1 || got.Coflows[0].FlowsLeft != 1 || got.Coflows[0].Phase != "thin" {
		t.Fatalf("GET /v1/coflows: %+v, want the thin shuffle with its flow left", got)
	}
	progress := func(n int) protocol.CoflowReportRequest {
		return protocol.CoflowReportRequest{AgentID: a1, Flows: []protocol.FlowProgress{
			{FrameworkID: fw, CoflowID: "s", Src: a1, Dst: a2, BytesSent: int64(n) * 1000, Transfers: n}}}
	}
	if err := report(progress(1)); err != nil {
		t.Fatal(err)
	}
	if got := getCoflows(t, m); len(got.Coflows) != 1 || got.Coflows[0].BytesSent != 1000 {
		t.Fatalf("after one transfer: %+v, want the shuffle with 1000 bytes sent", got)
	}
	if sc := httpTestScrape(t, m); sc["allot_coflows"] != 1 {
		t.Fatalf("metrics: allot_coflows %v, want 1", sc["allot_coflows"])
	}
	if err := report(progress(2)); err != nil {
		t.Fatal(err)
	}
	inbox.wait(t, "")
	if got := getCoflows(t, m); len(got.Coflows) != 0 || got.Completed != 1 {
		t.Fatalf("after the last transfer: %+v, want none left and one completed", got)
	}
	if sc := httpTestScrape(t, m); sc["allot_coflows"] != 0 || sc["allot_coflows_completed"] != 1 {
		t.Fatalf("metrics: allot_coflows %v, allot_coflows_completed %v; want 0 and 1", sc["allot_coflows"], sc["allot_coflows_completed"])
	}
}

func getCoflows(t *testing.T, m *Master) api.Coflows {
	t.Helper()
	code, _, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/coflows")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/coflows: %d %s", code, body)
	}
	var out api.Coflows
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
