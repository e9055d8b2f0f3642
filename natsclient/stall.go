package natsclient

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// AgentPingInterval is how often an agent's connection pings its server.
// Agents are a cluster's many clients, and the masters embed the servers:
// 10,000 agents pinging every second cost the servers and the agents
// together about half a core (BenchmarkIdleAgents; docs/benchmarks.md,
// "Agents' pings").
// An agent finds a server that stopped answering through its heartbeats
// instead (MoveOnIfStalled); its pings are a backstop.
const AgentPingInterval = 30 * time.Second

// AgentOptions are Options for an agent's connection: the same, but
// pinging every AgentPingInterval and patient with a slow handshake.
func AgentOptions() []nats.Option {
	return append(Options(), nats.PingInterval(AgentPingInterval), nats.Timeout(AgentConnectTimeout))
}

// AgentConnectTimeout bounds an agent's connection attempt, the dial and
// the handshake. When a master dies, a third of the agents reconnect to
// the other two servers at once; nats.go's 2 s would give up handshakes
// that those servers, or a loaded agent machine, finish a little later,
// and every attempt given up is done again from the start, adding to the
// crowd. An agent has nothing better to do meanwhile.
const AgentConnectTimeout = 5 * time.Second

// StallCheck is how long a server may take to answer a ping, after a
// request through it went unanswered, before MoveOnIfStalled gives it up.
const StallCheck = time.Second

// Unanswered reports whether a request's error says no reply came in
// time (rather than a reply with an error, or no responder at all).
func Unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
}

// MoveOnIfStalled is what a client does when a request went unanswered:
// the leader may be slow or gone, or the client's own server may have
// stopped answering without closing its socket (a paused or hung master).
// It pings the server and, when no answer comes within within, drops the
// connection so that the client reconnects through another server of its
// list. It reports whether it did.
func MoveOnIfStalled(nc *nats.Conn, within time.Duration) (bool, error) {
	if !nc.IsConnected() {
		return false, nil // already reconnecting, or closed
	}
	if err := nc.FlushTimeout(within); !errors.Is(err, nats.ErrTimeout) || !nc.IsConnected() {
		return false, nil
	}
	return true, nc.ForceReconnect()
}
