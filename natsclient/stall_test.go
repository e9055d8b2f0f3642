package natsclient

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// startServer starts an embedded NATS server for the test.
func startServer(t testing.TB) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded NATS server not ready")
	}
	return srv
}

// connectThrough connects an agent's connection to the proxy first, the
// server itself second.
func connectThrough(t *testing.T, p *testutil.Proxy, srv *server.Server) *nats.Conn {
	t.Helper()
	opts := append(AgentOptions(), nats.DontRandomize())
	nc, err := nats.Connect(p.URL()+","+srv.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if got := nc.ConnectedUrl(); got != p.URL() {
		t.Fatalf("connected to %s, want the proxy %s", got, p.URL())
	}
	return nc
}

// TestMoveOnIfStalled_leavesAServerThatStoppedAnswering: a server that
// keeps its socket open and answers nothing is given up for the next one
// in the client's list, well before the agent's pings would find it.
func TestMoveOnIfStalled_leavesAServerThatStoppedAnswering(t *testing.T) {
	srv := startServer(t)
	p := testutil.NewProxy(t, srv.ClientURL())
	nc := connectThrough(t, p, srv)
	p.Stall()

	moved, err := MoveOnIfStalled(nc, 200*time.Millisecond)
	if err != nil || !moved {
		t.Fatalf("MoveOnIfStalled = %v, %v; want it to give the stalled server up", moved, err)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if got := nc.ConnectedUrl(); got != srv.ClientURL() {
			return fmt.Errorf("on %q (status %v), want %s", got, nc.Status(), srv.ClientURL())
		}
		return nil
	})
	// The connection works again: a round trip through the server.
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatalf("flush after moving on: %v", err)
	}
}

// TestMoveOnIfStalled_staysOnAServerThatAnswers: an unanswered request
// says nothing against a server that answers pings (the leader may be slow
// or gone), so the client stays where it is.
func TestMoveOnIfStalled_staysOnAServerThatAnswers(t *testing.T) {
	srv := startServer(t)
	p := testutil.NewProxy(t, srv.ClientURL())
	nc := connectThrough(t, p, srv)

	moved, err := MoveOnIfStalled(nc, 5*time.Second)
	if err != nil || moved {
		t.Fatalf("MoveOnIfStalled = %v, %v; want it to stay", moved, err)
	}
	if got := nc.ConnectedUrl(); got != p.URL() {
		t.Fatalf("connected to %s after the check, want still the proxy %s", got, p.URL())
	}
	nc.Close()
	if moved, _ := MoveOnIfStalled(nc, 5*time.Second); moved {
		t.Fatal("MoveOnIfStalled moved a closed connection")
	}
}

func TestUnanswered(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("heartbeat: %w", nats.ErrTimeout), true},
		{nats.ErrNoResponders, false},
		{fmt.Errorf("%w: raft", protocol.ErrTimeout), false}, // the leader answered
		{protocol.ErrNotLeader, false},
		{errors.New("other"), false},
	} {
		if got := Unanswered(c.err); got != c.want {
			t.Errorf("Unanswered(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestAgentOptions_pingRarely: agents ping AgentPingInterval apart, the
// other clients every PingInterval.
func TestAgentOptions_pingRarely(t *testing.T) {
	var agent, other nats.Options
	for _, o := range AgentOptions() {
		if err := o(&agent); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range Options() {
		if err := o(&other); err != nil {
			t.Fatal(err)
		}
	}
	if agent.PingInterval != AgentPingInterval || other.PingInterval != PingInterval {
		t.Fatalf("ping intervals: agent %v, other %v; want %v and %v", agent.PingInterval, other.PingInterval, AgentPingInterval, PingInterval)
	}
	if agent.MaxReconnect != -1 || agent.ReconnectWait != ReconnectWait {
		t.Fatalf("agent reconnects %d times, waiting %v; want for ever, %v", agent.MaxReconnect, agent.ReconnectWait, ReconnectWait)
	}
}
