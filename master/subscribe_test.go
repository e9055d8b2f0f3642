package master

import (
	"testing"
	"time"

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
		msg, err := nc.Request(s.APIFramework(protocol.VerbSubscribe), data, 5*time.Second)
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
