package master

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// offerInbox collects the offers a framework is sent.
type offerInbox struct {
	mu     sync.Mutex
	offers []protocol.Offer
}

func (b *offerInbox) receive(msg *nats.Msg) {
	ev, ok := decodeEvent[protocol.OffersEvent](msg, protocol.MsgOffersEvent)
	if !ok {
		return
	}
	b.mu.Lock()
	b.offers = append(b.offers, ev.Offers...)
	b.mu.Unlock()
}

// decodeEvent decodes msg as an event of type t, reporting false for any
// other message.
func decodeEvent[T any](msg *nats.Msg, t protocol.MsgType) (T, bool) {
	var ev T
	env, err := protocol.Decode(msg.Data)
	if err != nil || env.Type != t {
		return ev, false
	}
	return ev, protocol.DecodeBody(env, &ev) == nil
}

// take waits until offers of every given kind have arrived, and returns
// (and removes) every offer received by then, by kind; more than one
// offer of a kind fails the test.
func (b *offerInbox) take(t *testing.T, kinds ...protocol.OfferKind) map[protocol.OfferKind]protocol.Offer {
	t.Helper()
	got := map[protocol.OfferKind]protocol.Offer{}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, o := range b.offers {
			if prev, dup := got[o.Kind]; dup {
				t.Fatalf("two %s offers: %+v and %+v", o.Kind, prev, o)
			}
			got[o.Kind] = o
		}
		b.offers = nil
		for _, k := range kinds {
			if _, ok := got[k]; !ok {
				return fmt.Errorf("no %s offer yet (have %v)", k, got)
			}
		}
		return nil
	})
	return got
}

// TestMaster_Leftover runs the leftover path through the master's API: a
// demand report's must-start set is offered fair and its optional work as
// leftover; a task takes its offer's kind whatever the framework says; a
// decline marked leftover installs no refuse filter, so the optional work
// is offered again at once, while a plain decline filters the agent.
func TestMaster_Leftover(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	agent := registerTestAgent(t, nc)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "carbyne", Principal: "p", Role: "eng", Suppressed: true},
		inbox.receive)

	// Five runnable tasks: one must start now, four may run on leftover.
	task := protocol.Scalars(map[string]int64{"cpus": 100, "mem": 100})
	shape := func(n int64) []protocol.TaskShape {
		return []protocol.TaskShape{{Resources: task, Count: n}}
	}
	// Subscribed suppressed, it declares first and then opens its offers,
	// so that no round sees it undeclared.
	httpTestRequest(t, nc, viaBody, protocol.MsgDemandRequest, protocol.DemandRequest{
		FrameworkID: fw.FrameworkID, Demand: shape(5), MustStart: shape(1), Optional: shape(4), RemainingWork: 5,
	}, nil)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	got := inbox.take(t, protocol.OfferFair, protocol.OfferLeftover)
	fair, leftover := got[protocol.OfferFair], got[protocol.OfferLeftover]
	if c := fair.Resources.Scalar("cpus"); c != 100 {
		t.Errorf("fair offer: %s, want one task", fair.Resources)
	}
	if c := leftover.Resources.Scalar("cpus"); c != 400 {
		t.Errorf("leftover offer: %s, want four tasks", leftover.Resources)
	}
	if !leftover.Revocable || fair.Revocable {
		t.Errorf("revocable: leftover offer %v, fair offer %v; want only the leftover one revocable", leftover.Revocable, fair.Revocable)
	}
	if fair.Addresses.HTTP != "127.0.0.1:5051" || leftover.Addresses.HTTP != "127.0.0.1:5051" {
		t.Errorf("offers carry agent addresses %+v and %+v, want the agent's 127.0.0.1:5051", fair.Addresses, leftover.Addresses)
	}

	// A task on the leftover offer is a leftover task, though the
	// framework says fair.
	launch := func(o protocol.Offer, id protocol.TaskID) {
		t.Helper()
		httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
			FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{o.ID},
			Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{{
				TaskID: id, AgentID: agent.AgentID, Resources: task, Kind: protocol.OfferFair,
				Command: protocol.CommandInfo{Shell: true, Value: "true"},
			}}}},
		}, nil)
	}
	launch(leftover, "t-leftover")
	launch(fair, "t-fair")
	for id, want := range map[protocol.TaskID]protocol.OfferKind{"t-leftover": protocol.OfferLeftover, "t-fair": protocol.OfferFair} {
		tk, ok := m.View().Task(fw.FrameworkID, id)
		if !ok || tk.Kind != want || tk.Info.Kind != want {
			t.Errorf("task %s: got %+v, want kind %s", id, tk, want)
		}
	}
	// The leftover pool in use is the leftover task's alone; the embedded
	// NATS server counts this test's clients and their messages.
	checkLeftoverMetrics(t, gatherSamples(t, m), task)

	// The three optional tasks left come back as leftover; declined as
	// leftover, they are offered again without waiting for a filter.
	again := inbox.take(t, protocol.OfferLeftover)[protocol.OfferLeftover]
	if c := again.Resources.Scalar("cpus"); c != 300 {
		t.Errorf("leftover offer after the launch: %s, want three tasks", again.Resources)
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgDeclineRequest, protocol.DeclineRequest{
		FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{again.ID}, Leftover: true,
	}, nil)
	again = inbox.take(t, protocol.OfferLeftover)[protocol.OfferLeftover]

	// A plain decline installs the default 5 s filter on that agent: when
	// a second agent joins, its resources are offered and the first
	// agent's are not (they would come first, or in the same round).
	httpTestRequest(t, nc, viaBody, protocol.MsgDeclineRequest, protocol.DeclineRequest{
		FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{again.ID},
	}, nil)
	var agent2 protocol.RegisterReply
	httpTestRequest(t, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{
		Hostname: "host-2", Addresses: protocol.Addresses{HTTP: "127.0.0.1:5052"},
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000, "mem": 1000}),
	}, &agent2)
	httpTestRequest(t, nc, viaBody, protocol.MsgHeartbeatRequest,
		protocol.HeartbeatRequest{AgentID: agent2.AgentID}, nil)
	got = inbox.take(t, protocol.OfferLeftover)
	if o := got[protocol.OfferLeftover]; len(got) != 1 || o.AgentID != agent2.AgentID || o.Resources.Scalar("cpus") != 300 {
		t.Fatalf("offers after the plain decline: got %+v, want three leftover tasks on %s", got, agent2.AgentID)
	}

	// Declared without optional work, a framework gets no leftover offers.
	httpTestRequest(t, nc, viaBody, protocol.MsgDemandRequest, protocol.DemandRequest{
		FrameworkID: fw.FrameworkID, Demand: shape(1),
	}, nil)
	got = inbox.take(t, protocol.OfferFair)
	if o := got[protocol.OfferFair]; len(got) != 1 || o.AgentID != agent2.AgentID || o.Resources.Scalar("cpus") != 100 {
		t.Fatalf("offers without optional work: got %+v, want one fair task on %s", got, agent2.AgentID)
	}
}

// checkLeftoverMetrics checks the samples of TestMaster_Leftover's master
// once it runs one fair and one leftover task of resources task.
func checkLeftoverMetrics(t *testing.T, samples map[string]float64, task protocol.Resources) {
	t.Helper()
	if got, want := samples[`allot_revocable_resources{resource="cpus"}`], float64(task.Scalar("cpus")); got != want {
		t.Errorf("allot_revocable_resources for cpus %v, want the leftover task's %v", got, want)
	}
	// The framework's fair share is all it described: five tasks (the role's only
	// framework, on a cluster with room for ten).
	if got := samples[`allot_role_fair_share{resource="cpus",role="eng"}`]; got != 500 {
		t.Errorf("allot_role_fair_share of eng for cpus %v, want 500", got)
	}
	if got := samples["allot_nats_connections"]; got < 2 {
		t.Errorf("allot_nats_connections %v, want the master's and the test's clients", got)
	}
	if got := samples[`allot_nats_messages_total{direction="in"}`]; got == 0 {
		t.Error("allot_nats_messages_total in 0 after the test's requests")
	}
}
