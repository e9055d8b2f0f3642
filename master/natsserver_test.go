package master

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
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
	ch := make(chan *nats.Msg, 1)
	s, err := sub.ChanSubscribe("allot.test", ch)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe()
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	// Route interest propagates asynchronously: publish until it arrives.
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
