package master

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

func testNATSConfig(routes ...string) NATSConfig {
	c := DefaultNATSConfig()
	c.Host, c.Port = "127.0.0.1", -1
	c.ClusterHost, c.ClusterPort = "127.0.0.1", -1
	c.Routes = routes
	return c
}

// TestEmbeddedNATS_ClusterRoutesMessages starts three embedded servers the
// way three masters do and checks that a message published on one server
// reaches a subscriber on another.
func TestEmbeddedNATS_ClusterRoutesMessages(t *testing.T) {
	t.Parallel()
	log := testlog.New(t)
	first, err := startNATS(testNATSConfig(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.shutdown)
	servers := []*embeddedNATS{first}
	for i := 0; i < 2; i++ {
		s, err := startNATS(testNATSConfig(first.RouteURL()), log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.shutdown)
		servers = append(servers, s)
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		for i, s := range servers {
			if n := s.NumRoutes(); n < 2 {
				return fmt.Errorf("server %d has %d routes, want 2", i, n)
			}
		}
		return nil
	})
	sub, err := nats.Connect(servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := nats.Connect(servers[2].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitRouted(t, pub, sub)
}

// waitRouted checks that a message pub publishes reaches sub (connected to
// another server). Route interest propagates asynchronously: it publishes
// until the message arrives.
func waitRouted(t *testing.T, pub, sub *nats.Conn) {
	t.Helper()
	ch := make(chan *nats.Msg, 1)
	s, err := sub.ChanSubscribe("allot.test", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe()
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if err := pub.Publish("allot.test", []byte("hello")); err != nil {
			return err
		}
		select {
		case m := <-ch:
			if string(m.Data) != "hello" {
				return fmt.Errorf("got %q, want hello", m.Data)
			}
			return nil
		case <-time.After(50 * time.Millisecond):
			return fmt.Errorf("no message yet")
		}
	})
}

func TestNATSConfig_Validate(t *testing.T) {
	t.Parallel()
	bad := []NATSConfig{
		{Port: 70000, MaxPayload: 1},
		{Port: 4222, ClusterPort: -5, MaxPayload: 1},
		{Port: 4222, MaxPayload: 0},
		{External: []string{""}},
		{Port: 4222, MaxPayload: 1, TLS: NATSTLS{Cert: "c.pem"}},
		{Port: 4222, MaxPayload: 1, TLS: NATSTLS{Cert: "c.pem", Key: "k.pem", VerifyClients: true}},
	}
	for i, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("config %d: got nil, want an error", i)
		}
	}
	if err := DefaultNATSConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

// TestEmbeddedNATS_Token: with a token, the embedded servers refuse clients
// without it, serve clients that present it, and route to each other with
// it, so a message crosses from one server to another.
func TestEmbeddedNATS_Token(t *testing.T) {
	t.Parallel()
	log := testlog.New(t)
	cfg := testNATSConfig()
	cfg.Token = "s3cret"
	first, err := startNATS(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.shutdown)
	cfg2 := testNATSConfig(first.RouteURL())
	cfg2.Token = "s3cret"
	second, err := startNATS(cfg2, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.shutdown)
	if nc, err := nats.Connect(first.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("a client without the token connected")
	}
	if nc, err := nats.Connect(first.ClientURL(), nats.Token("guess")); err == nil {
		nc.Close()
		t.Fatal("a client with a wrong token connected")
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := second.NumRoutes(); n < 1 {
			return fmt.Errorf("second server has %d routes, want 1", n)
		}
		return nil
	})
	sub, err := nats.Connect(first.ClientURL(), nats.Token("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// The token in the URL, as agents and frameworks give it.
	withToken := strings.Replace(second.ClientURL(), "nats://", "nats://s3cret@", 1)
	pub, err := nats.Connect(withToken)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitRouted(t, pub, sub)
}

// TestMaster_NATSToken: a master whose embedded server wants a token leads
// and serves framework calls from clients that present it.
func TestMaster_NATSToken(t *testing.T) {
	t.Parallel()
	cfg := httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil)
	cfg.HTTPAddr = ""
	cfg.NATS.Token = "s3cret"
	m := runHTTPTestMaster(t, cfg)
	httpTestWaitLeader(t, m)
	if nc, err := nats.Connect(m.NATSURL()); err == nil {
		nc.Close()
		t.Fatal("a client without the token connected")
	}
	nc, err := nats.Connect(m.NATSURL(), nats.Token("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var reply protocol.SubscribeReply
	if err := frameworkCall(t, nc, protocol.VerbSubscribe, nil, protocol.SubscribeRequest{Name: "f", Role: "eng"}, &reply); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if _, ok := m.View().Framework(reply.FrameworkID); !ok {
		t.Fatalf("framework %s not registered", reply.FrameworkID)
	}
}
