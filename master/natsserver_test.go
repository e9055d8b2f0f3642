package master

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/natsauth"
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
	first, err := startNATS(testNATSConfig(), nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.shutdown)
	servers := []*embeddedNATS{first}
	for i := 0; i < 2; i++ {
		s, err := startNATS(testNATSConfig(first.RouteURL()), nil, log)
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

// TestEmbeddedNATS_Auth: with identities, the embedded servers refuse
// clients without a credential, serve clients that present one, and route
// to each other with the master secret, so a message crosses from one
// server to another; the shared token of old is refused.
func TestEmbeddedNATS_Auth(t *testing.T) {
	t.Parallel()
	log := testlog.New(t)
	auth := &natsauth.Config{MasterSecret: "m-s3cret", Frameworks: map[string]string{"analytics": "s3cret"}, Logger: log}
	cfg := testNATSConfig()
	cfg.MasterSecret = "m-s3cret"
	first, err := startNATS(cfg, auth, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.shutdown)
	cfg2 := testNATSConfig(first.RouteURL())
	cfg2.MasterSecret = "m-s3cret"
	second, err := startNATS(cfg2, auth, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.shutdown)
	for name, opts := range map[string][]nats.Option{
		"no credential":  nil,
		"the old token":  {nats.Token("m-s3cret")},
		"a wrong secret": {nats.UserInfo("framework.analytics", "guess")},
		"another kind":   {nats.UserInfo("agent.analytics", "s3cret")},
	} {
		if nc, err := nats.Connect(first.ClientURL(), opts...); err == nil {
			nc.Close()
			t.Fatalf("a client with %s connected", name)
		}
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := second.NumRoutes(); n < 1 {
			return fmt.Errorf("second server has %d routes, want 1", n)
		}
		return nil
	})
	sub, err := nats.Connect(first.ClientURL(), nats.UserInfo("master.m1", "m-s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// The credential in the URL, as an operator may give it.
	withCreds := strings.Replace(second.ClientURL(), "nats://", "nats://master.m2:m-s3cret@", 1)
	pub, err := nats.Connect(withCreds)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitRouted(t, pub, sub)
}

// TestMaster_NATSAuth: a master whose embedded server authenticates
// connects with its master secret, leads, and serves framework calls from
// a principal, on the principal's subjects only.
func TestMaster_NATSAuth(t *testing.T) {
	t.Parallel()
	cfg := httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil)
	cfg.HTTPAddr = ""
	cfg.NATS.MasterSecret = "m-s3cret"
	cfg.Credentials = map[string]string{"analytics": "s3cret"}
	m := runHTTPTestMaster(t, cfg)
	httpTestWaitLeader(t, m)
	if nc, err := nats.Connect(m.NATSURL()); err == nil {
		nc.Close()
		t.Fatal("a client without a credential connected")
	}
	nc, err := nats.Connect(m.NATSURL(), nats.UserInfo("framework.analytics", "s3cret"),
		nats.CustomInboxPrefix(protocol.Subjects{}.Inbox(protocol.KindFramework, "analytics")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var reply protocol.SubscribeReply
	if err := frameworkCall(t, nc, protocol.VerbSubscribe, nil, protocol.SubscribeRequest{Name: "f", Role: "eng", Principal: "analytics"}, &reply); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if f, ok := m.View().Framework(reply.FrameworkID); !ok || f.Principal != "analytics" {
		t.Fatalf("framework %s not registered as analytics: %+v", reply.FrameworkID, f)
	}
	bad := cfg
	bad.NATS.MasterSecret = ""
	if err := bad.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "master secret") {
		t.Fatalf("credentials without a master secret: %v, want ErrConfig naming the master secret", err)
	}
}

// A client port already taken fails the start at once, naming the
// address and the flag, instead of waiting for a server never ready.
func TestEmbeddedNATS_portTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testNATSConfig()
	cfg.Host, cfg.Port = "127.0.0.1", taken.Addr().(*net.TCPAddr).Port
	_, err = startNATS(cfg, nil, testlog.New(t))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), taken.Addr().String()) || !strings.Contains(err.Error(), "--nats-listen") {
		t.Fatalf("startNATS on a taken port: %v, want ErrConfig naming %s and --nats-listen", err, taken.Addr())
	}
}
