package master

import (
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// leaderDeps is everything a leader uses of its master: its settings,
// identity and addresses, the replicated state, the NATS connection, the
// Raft node and the metrics. A leader holds nothing else of the master,
// so what its services can reach is written here.
type leaderDeps struct {
	id       string
	cfg      Config
	natsURL  string
	httpAddr func() string
	view     func() *state.View
	nc       *nats.Conn
	node     *raftstore.Node
	metrics  *metrics
	// principalOf is the principal a framework, current or completed,
	// registered with.
	principalOf func(protocol.FrameworkID) (string, bool)
}

// depsOf is what a leader of m uses of it.
func depsOf(m *Master) leaderDeps {
	return leaderDeps{
		id: m.ID(), cfg: m.cfg, natsURL: m.NATSURL(), httpAddr: m.httpAdvertiseAddr,
		view: m.View, nc: m.nc, node: m.node, metrics: m.metrics, principalOf: m.frameworkPrincipal,
	}
}
