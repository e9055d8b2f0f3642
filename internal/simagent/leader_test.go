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

// TestAgent_heartbeatsAtANewLeader: a simulated agent heartbeats as soon
// as it hears a new leader, as a real agent does, not at its next tick (an
// hour away here): the new leader counts its silence from the last
// heartbeat its predecessor heard.
func TestAgent_heartbeatsAtANewLeader(t *testing.T) {
	url := natsServer(t)
	master, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	subj := protocol.Subjects{Prefix: protocol.DefaultSubjectPrefix}
	var beats atomic.Int64
	// A master that registers the agent with an hour's heartbeat and
	// answers heartbeats.
	sub, err := master.Subscribe(subj.APIKind(protocol.KindAgent), func(m *nats.Msg) {
		env, err := protocol.Decode(m.Data)
		if err != nil {
			return
		}
		var body any
		switch env.Type {
		case protocol.MsgRegisterRequest:
			body = &protocol.RegisterReply{AgentID: "ag-SIM", HeartbeatInterval: time.Hour}
		case protocol.MsgHeartbeatRequest:
			beats.Add(1)
			body = &protocol.HeartbeatReply{HeartbeatInterval: time.Hour}
		default:
			return
		}
		if data, err := protocol.EncodeReply(body, nil); err == nil {
			_ = m.Respond(data)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Start(nc, subj, 0, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	before := beats.Load()
	ann, err := protocol.Encode(protocol.MsgLeaderAnnouncement, protocol.LeaderAnnouncement{ID: "m2", Term: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := master.Publish(subj.Leader(), ann); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := beats.Load(); n <= before {
			return fmt.Errorf("%d heartbeats since the announcement, want one", n-before)
		}
		return nil
	})
}
