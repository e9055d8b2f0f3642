package master

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// A framework subscribing again with its soft state (Resume) is offered at
// once, with no Demand or Revive after the subscribe: one task unit of its
// demand, on the agent its refusal in force leaves.
func TestSubscribe_resumeRestoresDemandAndRefusalsAndOpensOffers(t *testing.T) {
	t.Parallel()
	_, nc := apiTestMaster(t, nil)
	refused := registerNamedAgent(t, nc, "host-a").AgentID
	left := registerNamedAgent(t, nc, "host-b").AgentID
	inbox := &offerInbox{}
	first := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	id := first.FrameworkID

	unit := protocol.Scalars(map[string]int64{"cpus": 100, "mem": 100})
	var again protocol.SubscribeReply
	httpTestRequest(t, nc, viaBody, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{
		FrameworkID: id, Name: "f", Role: "eng", Session: first.Session,
		Resume: &protocol.SubscribeResume{
			Demand:   &protocol.DemandRequest{FrameworkID: id, Demand: []protocol.TaskShape{{Resources: unit, Count: 1}}},
			Refusals: []protocol.AgentRefusal{{AgentID: refused, Seconds: 600}},
		},
	}, &again)
	if again.FrameworkID != id || !again.Resumed {
		t.Fatalf("subscribed again as %s, resumed %v; want %s, resumed", again.FrameworkID, again.Resumed, id)
	}
	offer := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	if offer.AgentID != left {
		t.Errorf("offer on %s, the agent refused in the resume; want %s", offer.AgentID, left)
	}
	if got := offer.Resources.Scalars; got["cpus"] != 100 || got["mem"] != 100 {
		t.Errorf("offer of %v, want the one task unit the resumed demand declares (cpus 100, mem 100)", got)
	}
}

// A subscribe whose resume is not its own, or comes with no framework ID,
// is refused before anything is committed: the framework stays
// suppressed, no framework is registered.
func TestSubscribe_resumeOfAnotherFrameworkRefused(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	registerNamedAgent(t, nc, "host-a")
	victim := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "victim", Role: "eng", Suppressed: true}, func(*nats.Msg) {})
	attacker := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "attacker", Role: "eng", Suppressed: true}, func(*nats.Msg) {})
	before := len(m.View().Frameworks())

	theirs := &protocol.DemandRequest{FrameworkID: victim.FrameworkID,
		Demand: []protocol.TaskShape{{Resources: protocol.Scalars(map[string]int64{"cpus": 1000}), Count: 5}}}
	for name, req := range map[string]protocol.SubscribeRequest{
		"another's demand": {FrameworkID: attacker.FrameworkID, Name: "attacker", Role: "eng", Session: attacker.Session,
			Resume: &protocol.SubscribeResume{Demand: theirs}},
		"no framework id": {Name: "attacker", Role: "eng", Resume: &protocol.SubscribeResume{Demand: theirs}},
	} {
		err := apiTestCall(t, nc, viaBody, protocol.MsgSubscribeRequest, req, &protocol.SubscribeReply{})
		if !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if n := len(m.View().Frameworks()); n != before {
		t.Errorf("%d frameworks after the refused subscribes, want %d", n, before)
	}
	for _, id := range []protocol.FrameworkID{victim.FrameworkID, attacker.FrameworkID} {
		f, ok := m.View().Framework(id)
		if !ok || !f.Suppressed {
			t.Errorf("framework %s after the refused subscribes: %+v, want it held and suppressed", id, f)
		}
	}
}

// A resume whose demand the allocator refuses (one that asks for nothing)
// is not applied: the subscribe succeeds, says so, and the framework stays
// suppressed in the replicated state, for the driver to declare its demand
// by a call of its own, whose error it then hears.
func TestSubscribe_resumeWithARefusedDemandLeavesOffersClosed(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	registerNamedAgent(t, nc, "host-a")
	first := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, func(*nats.Msg) {})
	id := first.FrameworkID
	var again protocol.SubscribeReply
	httpTestRequest(t, nc, viaBody, protocol.MsgSubscribeRequest, protocol.SubscribeRequest{
		FrameworkID: id, Name: "f", Role: "eng", Session: first.Session,
		Resume: &protocol.SubscribeResume{
			Demand: &protocol.DemandRequest{FrameworkID: id, Demand: []protocol.TaskShape{{Count: 1}}},
		},
	}, &again)
	if again.Resumed {
		t.Errorf("a resume with a demand asking for nothing reported applied")
	}
	if f, ok := m.View().Framework(id); !ok || !f.Suppressed {
		t.Errorf("framework after the unapplied resume: %+v, want it suppressed", f)
	}
	err := apiTestCall(t, nc, viaBody, protocol.MsgDemandRequest,
		protocol.DemandRequest{FrameworkID: id, Demand: []protocol.TaskShape{{Count: 1}}}, nil)
	if err == nil {
		t.Errorf("the same demand by a call of its own was accepted; the driver would hear no error")
	}
}
