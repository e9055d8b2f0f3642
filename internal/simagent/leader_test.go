package simagent

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

var testSubjects = protocol.Subjects{Prefix: protocol.DefaultSubjectPrefix}

// fakeMaster is a master on its own connection to url that registers
// agents with the given heartbeat interval and answers their heartbeats.
type fakeMaster struct {
	nc    *nats.Conn
	beats atomic.Int64
}

func startFakeMaster(t *testing.T, url string, heartbeat time.Duration) *fakeMaster {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	m := &fakeMaster{nc: nc}
	_, err = nc.Subscribe(testSubjects.APIKind(protocol.KindAgent), func(msg *nats.Msg) {
		env, err := protocol.Decode(msg.Data)
		if err != nil {
			return
		}
		var body any
		switch env.Type {
		case protocol.MsgRegisterRequest:
			body = &protocol.RegisterReply{AgentID: "ag-SIM", HeartbeatInterval: heartbeat}
		case protocol.MsgHeartbeatRequest:
			m.beats.Add(1)
			body = &protocol.HeartbeatReply{HeartbeatInterval: heartbeat}
		default:
			return
		}
		if data, err := protocol.EncodeReply(body, nil); err == nil {
			_ = msg.Respond(data)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return m
}

// waitForBeats waits until the master has heard more than after heartbeats.
func (m *fakeMaster) waitForBeats(t *testing.T, after int64, within time.Duration) {
	t.Helper()
	testutil.WaitFor(t, within, 10*time.Millisecond, func() error {
		if n := m.beats.Load(); n <= after {
			return fmt.Errorf("%d heartbeats since, want one", n-after)
		}
		return nil
	})
}

// TestAgent_heartbeatsAtANewLeader: a simulated agent heartbeats as soon
// as it hears a new leader, as a real agent does, not at its next tick (an
// hour away here): the new leader counts its silence from the last
// heartbeat its predecessor heard.
func TestAgent_heartbeatsAtANewLeader(t *testing.T) {
	url := natsServer(t)
	master := startFakeMaster(t, url, time.Hour)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Start(nc, testSubjects, 0, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	before := master.beats.Load()
	ann, err := protocol.Encode(protocol.MsgLeaderAnnouncement, protocol.LeaderAnnouncement{ID: "m2", Term: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := master.nc.Publish(testSubjects.Leader(), ann); err != nil {
		t.Fatal(err)
	}
	master.waitForBeats(t, before, 10*time.Second)
}

// TestAgent_leavesAStalledServer: an agent whose NATS server stops
// answering without closing its socket (a paused master) finds out from
// its unanswered heartbeats and carries on through another server, though
// its connection pings only every two minutes (nats.go's default).
func TestAgent_leavesAStalledServer(t *testing.T) {
	direct := natsServer(t)
	proxy := testutil.NewProxy(t, direct)
	master := startFakeMaster(t, direct, 50*time.Millisecond)
	nc, err := nats.Connect(proxy.URL()+","+direct, nats.DontRandomize(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Start(nc, testSubjects, 0, Options{RequestTimeout: 200 * time.Millisecond, StallCheck: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	master.waitForBeats(t, 0, 10*time.Second)

	proxy.Stall()
	stalled := master.beats.Load()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := nc.ConnectedUrl(); got != direct {
			return fmt.Errorf("agent on %q (status %v), want %s", got, nc.Status(), direct)
		}
		return nil
	})
	master.waitForBeats(t, stalled, 10*time.Second)
}

// TestAgent_heartbeatsOnceBackOnAServer: an agent whose connection came
// back after an outage (its master killed, say) heartbeats at once, not
// at its next tick (an hour away here): the leader has not heard it for
// the length of the outage already.
func TestAgent_heartbeatsOnceBackOnAServer(t *testing.T) {
	url := natsServer(t)
	master := startFakeMaster(t, url, time.Hour)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Start(nc, testSubjects, 0, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	before := master.beats.Load()
	if err := nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	master.waitForBeats(t, before, 10*time.Second)
	if n := nc.Stats().Reconnects; n == 0 {
		t.Fatal("heard a heartbeat, but the connection never reconnected")
	}
}
