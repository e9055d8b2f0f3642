package master

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// Explain says when a role below its guarantee waits for preemption: the
// need, its policy, what it lacks and when tasks will be taken for it.
func TestMaster_ExplainPreemptionNeed(t *testing.T) {
	t.Parallel()
	const delay = time.Hour
	m, nc := apiTestMaster(t, func(c *Config) {
		c.HTTPAddr, c.OperatorToken = "127.0.0.1:0", "op"
		c.Preemption.Delay, c.Preemption.Interval = delay, 20*time.Millisecond
	})
	agent := registerTestAgent(t, nc) // 1 CPU
	batchInbox := &offerInbox{}
	batch := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "batch", Role: "eng/batch", Suppressed: true}, batchInbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest, protocol.ReviveRequest{FrameworkID: batch.FrameworkID}, nil)
	whole := batchInbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
		FrameworkID: batch.FrameworkID, OfferIDs: []protocol.OfferID{whole.ID},
		Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{{
			TaskID: "long", AgentID: agent.AgentID, Resources: whole.Resources,
			Command: protocol.CommandInfo{Shell: true, Value: "sleep 600"}}}}},
	}, nil)
	if code, body := httpTestPut(t, "http://"+m.HTTPAddr()+"/v1/roles/eng/prod", "op", `{"guarantee": {"cpus": 500}}`); code != 200 {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	prod := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "prod", Role: "eng/prod", Suppressed: true}, (&offerInbox{}).receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgDemandRequest, protocol.DemandRequest{FrameworkID: prod.FrameworkID,
		Demand: []protocol.TaskShape{{Resources: protocol.Scalars(map[string]int64{"cpus": 500, "mem": 10}), Count: 1}}}, nil)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest, protocol.ReviveRequest{FrameworkID: prod.FrameworkID}, nil)

	var ex api.Explanation
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		code, _, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/frameworks/"+string(prod.FrameworkID)+"/explain")
		if err := json.Unmarshal(body, &ex); code != 200 || err != nil {
			return fmt.Errorf("explain: %d %s", code, body)
		}
		if len(ex.Preemption) == 0 {
			return fmt.Errorf("no preemption need yet: %+v", ex)
		}
		return nil
	})
	n := ex.Preemption[0]
	since, err1 := time.Parse(time.RFC3339Nano, n.Since)
	eligible, err2 := time.Parse(time.RFC3339Nano, n.EligibleAt)
	if n.For != "role eng/prod" || n.Policy != "guarantees" || n.Short.Scalar("cpus") != 500 ||
		err1 != nil || err2 != nil || eligible.Sub(since) != delay || n.Warned != 0 {
		t.Fatalf("need %+v, want role eng/prod short of 500 milli-CPUs under guarantees, eligible an hour after it began", n)
	}
	found := false
	for _, r := range ex.Reasons {
		found = found || strings.Contains(r, "role eng/prod is short of") && strings.Contains(r, n.EligibleAt)
	}
	if !found {
		t.Fatalf("reasons %q do not say when tasks will be taken for eng/prod", ex.Reasons)
	}
	// The batch framework is not short of anything: no need concerns it.
	code, _, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/frameworks/"+string(batch.FrameworkID)+"/explain")
	var bex api.Explanation
	if err := json.Unmarshal(body, &bex); code != 200 || err != nil || len(bex.Preemption) != 0 {
		t.Fatalf("batch's explanation: %d %s, want no preemption need", code, body)
	}
}
