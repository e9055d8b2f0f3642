package master

import (
	"errors"
	"net/http"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// A task may be marked non-preemptible only within its role's guarantee,
// on a fair offer: beyond it, or under a role without a guarantee, the
// accept fails with ErrNotPreemptible and nothing is launched.
func TestMaster_NonPreemptibleWithinGuarantee(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	if code, body := httpTestPut(t, "http://"+m.HTTPAddr()+"/v1/roles/eng", "op", `{"guarantee": {"cpus": 300}}`); code != http.StatusOK {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	agent := registerTestAgent(t, nc) // 1 CPU
	task := func(id protocol.TaskID, cpus int64, pinned bool) protocol.TaskInfo {
		return protocol.TaskInfo{TaskID: id, AgentID: agent.AgentID, NonPreemptible: pinned,
			Resources: protocol.Scalars(map[string]int64{"cpus": cpus, "mem": 10}),
			Command:   protocol.CommandInfo{Shell: true, Value: "true"}}
	}
	subscribe := func(name, role string) (protocol.FrameworkID, *offerInbox) {
		inbox := &offerInbox{}
		fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: name, Role: role, Suppressed: true}, inbox.receive)
		httpTestRequest(t, nc, viaBody, protocol.MsgDemandRequest, protocol.DemandRequest{FrameworkID: fw.FrameworkID,
			Demand: []protocol.TaskShape{{Resources: protocol.Scalars(map[string]int64{"cpus": 100, "mem": 10}), Count: 3}}}, nil)
		httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest, protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
		return fw.FrameworkID, inbox
	}
	offer := func(inbox *offerInbox) protocol.Offer { return inbox.take(t, protocol.OfferFair)[protocol.OfferFair] }
	accept := func(fw protocol.FrameworkID, o protocol.Offer, tasks ...protocol.TaskInfo) error {
		return apiTestCall(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
			FrameworkID: fw, OfferIDs: []protocol.OfferID{o.ID},
			Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: tasks}}}, nil)
	}

	prod, prodInbox := subscribe("prod", "eng/prod")
	if err := accept(prod, offer(prodInbox), task("p1", 200, true)); err != nil {
		t.Fatalf("a non-preemptible task within eng's guarantee: %v", err)
	}
	if tk, ok := m.View().Task(prod, "p1"); !ok || !tk.Info.NonPreemptible {
		t.Fatalf("task p1 %+v, want it launched non-preemptible", tk)
	}
	err := accept(prod, offer(prodInbox), task("p2", 200, true))
	if !errors.Is(err, protocol.ErrNotPreemptible) {
		t.Fatalf("non-preemptible tasks beyond the guarantee (400 of 300): %v, want ErrNotPreemptible", err)
	}
	if _, ok := m.View().Task(prod, "p2"); ok {
		t.Fatal("the refused non-preemptible task p2 is in the state")
	}

	ops, opsInbox := subscribe("ops", "ops")
	o := offer(opsInbox)
	if err := accept(ops, o, task("o1", 100, true)); !errors.Is(err, protocol.ErrNotPreemptible) {
		t.Fatalf("a non-preemptible task under a role without a guarantee: %v, want ErrNotPreemptible", err)
	}
	if _, ok := m.View().Task(ops, "o1"); ok {
		t.Fatal("the refused task o1 is in the state")
	}
	if err := accept(ops, o, task("o2", 100, false)); err != nil {
		t.Fatalf("a preemptible task on the same offer after the refusal: %v", err)
	}
}
