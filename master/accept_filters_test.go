package master

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestMaster_AcceptFilters: what an accept leaves unused is offered again
// at once, unless the accept names filters, which then refuse the agent to
// the framework for their duration (as in Mesos).
func TestMaster_AcceptFilters(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	agent := registerTestAgent(t, nc)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)

	task := protocol.Scalars(map[string]int64{"cpus": 100, "mem": 100})
	launch := func(o protocol.Offer, id protocol.TaskID, filters *protocol.Filters) {
		t.Helper()
		httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
			FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{o.ID}, Filters: filters,
			Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{{
				TaskID: id, AgentID: agent.AgentID, Resources: task,
				Command: protocol.CommandInfo{Shell: true, Value: "true"},
			}}}},
		}, nil)
	}
	first := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	launch(first, "t1", nil)
	again := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	if c := again.Resources.Scalar("cpus"); c != 900 {
		t.Fatalf("remainder offered again: %s, want 900 milli-CPUs", again.Resources)
	}
	launch(again, "t2", &protocol.Filters{RefuseSeconds: 3600})
	// The allocation interval is 20 ms: fifty rounds pass without an offer.
	err := testutil.Poll(time.Second, 20*time.Millisecond, func() error {
		inbox.mu.Lock()
		defer inbox.mu.Unlock()
		if len(inbox.offers) > 0 {
			return nil
		}
		return errors.New("no offer")
	})
	if err == nil {
		t.Fatalf("offered %+v while the accept's filter refuses the agent", inbox.offers)
	}
	// The two launched tasks (staging: no agent runs them here) are what
	// role eng holds, and no offer is outstanding.
	for name, want := range map[string]float64{
		`allot_role_allocated{resource="cpus",role="eng"}`: 200,
		`allot_role_allocated{resource="mem",role="eng"}`:  200,
		`allot_tasks{state="STAGING"}`:                     2,
		`allot_offers_outstanding`:                         0,
	} {
		if got, ok := gatherSamples(t, m)[name]; !ok || got != want {
			t.Errorf("%s: got %v (present %v), want %v", name, got, ok, want)
		}
	}
}

// TestMaster_DeclineRefuseSeconds: a decline's RefuseSeconds is the time
// the agent stays refused to the framework: an offer declined for 0.3 s
// comes back after that, well before the master's default filter (5 s)
// would let it.
//
// Mutants this catches (master/framework_api.go decline): the request's
// filter ignored for the default (the offer comes back after 5 s, not
// within 3), or for none (it comes back at once).
func TestMaster_DeclineRefuseSeconds(t *testing.T) {
	t.Parallel()
	const refuse = 300 * time.Millisecond
	_, nc := apiTestMaster(t, nil)
	registerTestAgent(t, nc)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest, protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	first := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	declined := time.Now()
	httpTestRequest(t, nc, viaBody, protocol.MsgDeclineRequest, protocol.DeclineRequest{FrameworkID: fw.FrameworkID,
		OfferIDs: []protocol.OfferID{first.ID}, Filters: &protocol.Filters{RefuseSeconds: refuse.Seconds()}}, nil)
	err := testutil.Poll(3*time.Second, 5*time.Millisecond, func() error {
		inbox.mu.Lock()
		defer inbox.mu.Unlock()
		if len(inbox.offers) == 0 {
			return errors.New("no offer yet")
		}
		return nil
	})
	back := time.Since(declined)
	if err != nil {
		t.Fatalf("the agent declined for %v was not offered again within 3 s", refuse)
	}
	if back < refuse {
		t.Errorf("offered again %v after a decline refusing the agent for %v", back.Round(time.Millisecond), refuse)
	}
}

// An accept that launches records the time since its offer was made; an
// accept launching nothing declines its offers, and counts in
// allot_offers_declined_total as a decline request does.
func TestMaster_AcceptMetrics(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	agent := registerTestAgent(t, nc)
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true}, inbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	o := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	if got := httpTestScrape(t, m)["allot_offer_to_launch_seconds_count"]; got != 0 {
		t.Fatalf("launches timed before any: %v", got)
	}
	httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
		FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{o.ID},
		Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: []protocol.TaskInfo{{
			TaskID: "t1", AgentID: agent.AgentID, Resources: protocol.Scalars(map[string]int64{"cpus": 100, "mem": 100}),
			Command: protocol.CommandInfo{Shell: true, Value: "true"},
		}}}},
	}, nil)
	samples := httpTestScrape(t, m)
	if samples["allot_offer_to_launch_seconds_count"] != 1 || samples["allot_offers_declined_total"] != 0 {
		t.Fatalf("after one launch: offer-to-launch count %v, declined %v; want 1 and 0",
			samples["allot_offer_to_launch_seconds_count"], samples["allot_offers_declined_total"])
	}
	again := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	httpTestRequest(t, nc, viaBody, protocol.MsgAcceptRequest, protocol.AcceptRequest{
		FrameworkID: fw.FrameworkID, OfferIDs: []protocol.OfferID{again.ID},
	}, nil)
	if got := httpTestScrape(t, m)["allot_offers_declined_total"]; got != 1 {
		t.Fatalf("allot_offers_declined_total after an accept of nothing: %v, want 1", got)
	}
}
