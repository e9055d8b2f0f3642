package master

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestFailover_FrameworkTimeout: a framework that stops listening is marked
// disconnected; one that subscribes again within its failover timeout keeps
// its registration, one that stays away longer is removed.
func TestFailover_FrameworkTimeout(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	s := protocol.Subjects{Prefix: "allot"}
	subscribe := func(id protocol.FrameworkID, failover time.Duration) (protocol.FrameworkID, *nats.Subscription) {
		t.Helper()
		var rep protocol.SubscribeReply
		httpTestRequest(t, nc, viaBody, protocol.MsgSubscribeRequest,
			protocol.SubscribeRequest{FrameworkID: id, Name: "f", Role: "eng", FailoverTimeout: failover}, &rep)
		subject, _ := s.FrameworkEvents("", rep.FrameworkID)
		sub, err := nc.SubscribeSync(subject)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		return rep.FrameworkID, sub
	}
	connected := func(id protocol.FrameworkID) (bool, bool) {
		f, ok := m.View().Framework(id)
		if !ok {
			return false, false
		}
		return f.Connected, true
	}

	// Kept: disconnects, comes back within an hour's failover timeout.
	kept, sub := subscribe("", time.Hour)
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if c, ok := connected(kept); !ok || c {
			return fmt.Errorf("framework %s: registered %v, connected %v; want registered and disconnected", kept, ok, c)
		}
		return nil
	})
	f, _ := m.View().Framework(kept)
	if f.DisconnectedAt == 0 {
		t.Errorf("disconnected framework has no DisconnectedAt")
	}
	subscribe(kept, time.Hour)
	if c, ok := connected(kept); !ok || !c {
		t.Errorf("resubscribed framework: registered %v, connected %v; want both", ok, c)
	}

	// Removed: disconnects and its 100 ms failover timeout runs out.
	gone, sub := subscribe("", 100*time.Millisecond)
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if _, ok := connected(gone); ok {
			return fmt.Errorf("framework %s still registered", gone)
		}
		return nil
	})
	if c, ok := connected(kept); !ok || !c {
		t.Errorf("the other framework: registered %v, connected %v; want both", ok, c)
	}
}
