package master

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestSubscribe_NonceMakesRetriesIdempotent sends a new framework's
// subscribe twice with one nonce, as a client whose first reply was lost
// would: both replies name the same framework, and only one is registered.
// A different nonce registers another.
func TestSubscribe_NonceMakesRetriesIdempotent(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	s := protocol.Subjects{Prefix: "allot"}
	subscribe := func(nonce string) protocol.FrameworkID {
		t.Helper()
		data, err := protocol.Encode(protocol.MsgSubscribeRequest,
			protocol.SubscribeRequest{Name: "f", Role: "eng", Principal: "p", Nonce: nonce})
		if err != nil {
			t.Fatal(err)
		}
		subject, err := s.APIFramework("p", "", protocol.VerbSubscribe)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := nc.Request(subject, data, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var reply protocol.SubscribeReply
		if err := protocol.DecodeReply(msg.Data, &reply); err != nil {
			t.Fatal(err)
		}
		return reply.FrameworkID
	}
	first, again := subscribe("sub-x"), subscribe("sub-x")
	if first != again {
		t.Errorf("retried subscribe got %s, want %s", again, first)
	}
	if other := subscribe("sub-y"); other == first {
		t.Errorf("another nonce got the same framework %s", other)
	}
	if n := len(m.View().Frameworks()); n != 2 {
		t.Errorf("leader holds %d frameworks, want 2", n)
	}
}

// TestSubscribe_NewRoleMovesTheFramework: a scheduler subscribing again
// with its framework ID and another role moves the framework there, in
// the replicated state and in the leader's allocator alike.
func TestSubscribe_NewRoleMovesTheFramework(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "")
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "a"}, func(*nats.Msg) {})
	var again protocol.SubscribeReply
	if err := frameworkCall(t, nc, protocol.VerbSubscribe, nil, protocol.SubscribeRequest{
		FrameworkID: fw.FrameworkID, Name: "f", Role: "b/c", Weight: 3}, &again); err != nil {
		t.Fatalf("subscribe again: %v", err)
	}
	if f, ok := m.View().Framework(fw.FrameworkID); !ok || f.Role != "b/c" || f.Weight != 3 {
		t.Fatalf("replicated framework %+v, want role b/c weight 3", f)
	}
	code, _, body := httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/frameworks/"+string(fw.FrameworkID)+"/explain")
	var ex api.Explanation
	if err := json.Unmarshal(body, &ex); code != http.StatusOK || err != nil || ex.Role != "b/c" {
		t.Fatalf("explain: %d %s, want the allocator to hold it under b/c", code, body)
	}
}
