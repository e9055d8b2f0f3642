package master

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// httpTestPost posts an empty body with an optional bearer token and
// returns the status and body.
func httpTestPost(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	return httpTestWithToken(t, http.MethodPost, url, token)
}

// httpTestWithToken sends an empty-bodied request with an optional bearer
// token and returns the status and body.
func httpTestWithToken(t *testing.T, method, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, _, body := httpTestDo(t, req)
	return code, body
}

// eventInbox keeps offers and rescinds a framework is sent.
type eventInbox struct {
	mu       sync.Mutex
	offers   []protocol.Offer
	rescinds []protocol.OfferID
}

func (b *eventInbox) receive(msg *nats.Msg) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev, ok := decodeEvent[protocol.OffersEvent](msg, protocol.MsgOffersEvent); ok {
		b.offers = append(b.offers, ev.Offers...)
	}
	if ev, ok := decodeEvent[protocol.RescindEvent](msg, protocol.MsgRescindEvent); ok {
		b.rescinds = append(b.rescinds, ev.OfferID)
	}
}

// TestMaster_DrainAgent: the operator drains an agent: its outstanding
// offer is rescinded, it is offered to nobody while draining (its state is
// replicated), and offered again once activated. The actions need the
// operator token, and answer 404 for an unknown agent and 400 for a bad ID.
func TestMaster_DrainAgent(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op-secret")
	agent := registerTestAgent(t, nc)
	inbox := &eventInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng"}, inbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	offered := func() (protocol.Offer, error) {
		inbox.mu.Lock()
		defer inbox.mu.Unlock()
		if len(inbox.offers) == 0 {
			return protocol.Offer{}, errors.New("no offer yet")
		}
		o := inbox.offers[len(inbox.offers)-1]
		inbox.offers = nil
		return o, nil
	}
	var first protocol.Offer
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() (err error) { first, err = offered(); return err })

	base := "http://" + m.HTTPAddr() + "/v1/agents/"
	if code, _ := httpTestPost(t, base+string(agent.AgentID)+"/drain", ""); code != http.StatusUnauthorized {
		t.Fatalf("drain without the token: %d, want 401", code)
	}
	code, body := httpTestPost(t, base+string(agent.AgentID)+"/drain", "op-secret")
	var got api.AgentState
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil || got.State != "draining" {
		t.Fatalf("drain: %d %s, want 200 and state draining", code, body)
	}
	if a, _ := m.View().Agent(agent.AgentID); a.State != "draining" {
		t.Fatalf("replicated agent state %q, want draining", a.State)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		inbox.mu.Lock()
		defer inbox.mu.Unlock()
		for _, id := range inbox.rescinds {
			if id == first.ID {
				return nil
			}
		}
		return errors.New("offer not rescinded yet")
	})
	// Allocation runs every 20 ms: fifty rounds make no offer.
	if err := testutil.Poll(time.Second, 20*time.Millisecond, func() error { _, err := offered(); return err }); err == nil {
		t.Fatal("the draining agent was offered")
	}
	if code, body := httpTestPost(t, base+string(agent.AgentID)+"/activate", "op-secret"); code != http.StatusOK {
		t.Fatalf("activate: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error { _, err := offered(); return err })

	if code, _ := httpTestPost(t, base+"ag-NOSUCHAGENT/drain", "op-secret"); code != http.StatusNotFound {
		t.Fatalf("drain an unknown agent: %d, want 404", code)
	}
	if code, _ := httpTestPost(t, base+"not%20an%20id/drain", "op-secret"); code != http.StatusBadRequest {
		t.Fatalf("drain a bad id: %d, want 400", code)
	}
}
