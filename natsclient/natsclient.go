// Package natsclient holds what every allot NATS client shares (the
// framework SDK, agents, the masters' own clients, the test cluster): the
// connection settings, which decide how fast a connection to a server that
// stopped answering is given up for another server of the cluster (by
// pings, or for agents by an unanswered heartbeat: MoveOnIfStalled), and
// the request loop that sends protocol requests to the leader and retries
// while none answers.
package natsclient

import (
	"time"

	"github.com/nats-io/nats.go"
)

// PingInterval and MaxPingsOutstanding bound how long a client stays on a
// server that accepts bytes but answers nothing (a paused or overloaded
// process keeps its sockets open): after MaxPingsOutstanding pings a
// PingInterval apart go unanswered, the client drops the connection and
// reconnects to another server in its list (the URLs it was given and
// those the cluster's servers advertise), within about three seconds.
// nats.go's defaults, two minutes and two pings, leave a client stuck on
// a paused server for four minutes.
const (
	PingInterval        = time.Second
	MaxPingsOutstanding = 2
)

// ReconnectWait is how long a client waits before trying a server again.
const ReconnectWait = 100 * time.Millisecond

// Options are the settings above, for nats.Connect.
func Options() []nats.Option {
	return []nats.Option{
		nats.PingInterval(PingInterval),
		nats.MaxPingsOutstanding(MaxPingsOutstanding),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(ReconnectWait),
	}
}
