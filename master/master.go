package master

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/natsauth"
	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// Master is one master process: its NATS server or connection, its Raft
// node and, while it leads, the leader services.
type Master struct {
	cfg    Config
	logger hclog.Logger

	nats *embeddedNATS
	nc   *nats.Conn
	node *raftstore.Node
	fsm  *fsm

	ready chan struct{}

	metrics *metrics    // this master's Prometheus registry (metrics.go)
	ops     operatorAPI // HTTP API and leader announcements (http.go)

	mu     sync.Mutex
	leader *leader // non-nil while this master leads and serves
	// rebuild asks the leadership loop to restart the leader services.
	rebuild chan struct{}
}

// New validates the configuration; Run starts everything.
func New(cfg Config) (*Master, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger.Named("master").With("node_id", cfg.Raft.NodeID)
	m := &Master{cfg: cfg, logger: logger, ready: make(chan struct{}), rebuild: make(chan struct{}, 1)}
	m.metrics = newMetrics(m.IsLeader, newStateCollector(m.stateView, m.outstandingOffers, m.coflowCounts, m.roleShares, m.fairShares), newRaftCollector(m),
		newNATSCollector(m.natsServer))
	return m, nil
}

// Run starts NATS, Raft and the leadership loop, and blocks until ctx is
// done; then it stops everything and returns.
func (m *Master) Run(ctx context.Context) error {
	if err := m.start(); err != nil {
		m.stop()
		return err
	}
	close(m.ready)
	m.logger.Info("master started", "nats_url", m.NATSURL(), "raft_addr", m.node.Addr())
	err := m.leadershipLoop(ctx)
	m.stop()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Ready is closed once NATS and Raft are up.
func (m *Master) Ready() <-chan struct{} { return m.ready }

func (m *Master) start() error {
	var urls string
	if m.cfg.NATS.Embedded() {
		var auth *natsauth.Config
		if m.cfg.authenticating() {
			a := m.cfg.natsAuth()
			a.Logger = m.logger
			auth = &a
		}
		srv, err := startNATS(m.cfg.NATS, auth, m.logger)
		if err != nil {
			return err
		}
		m.mu.Lock() // the metrics read it from scrapes
		m.nats = srv
		m.mu.Unlock()
		urls = srv.ClientURL()
	} else {
		for i, u := range m.cfg.NATS.External {
			if i > 0 {
				urls += ","
			}
			urls += u
		}
	}
	opts := append(natsclient.Options(), nats.Name("allot-master-"+m.cfg.Raft.NodeID))
	opts = append(opts, m.cfg.NATS.clientOptions(m.cfg.Raft.NodeID)...)
	nc, err := nats.Connect(urls, opts...)
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	m.nc = nc
	if err := m.watchLeader(); err != nil {
		return err
	}
	fsm := newFSM(m.logger)
	m.mu.Lock() // the metrics read it from scrapes
	m.fsm = fsm
	m.mu.Unlock()
	rc := m.cfg.Raft
	rc.Logger = m.logger
	node, err := raftstore.New(rc, m.fsm)
	if err != nil {
		return fmt.Errorf("start raft: %w", err)
	}
	m.node = node
	return m.startHTTP()
}

func (m *Master) stop() {
	m.stopHTTP()
	m.stepDown()
	if m.node != nil {
		if err := m.node.Shutdown(); err != nil {
			m.logger.Warn("raft shutdown", "error", err)
		}
	}
	if m.nc != nil {
		m.nc.Close()
	}
	if m.nats != nil {
		m.nats.shutdown()
	}
}

// leadershipLoop starts the leader services when this node wins an
// election and stops them when it loses leadership.
func (m *Master) leadershipLoop(ctx context.Context) error {
	changes := m.node.LeaderChanges()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case isLeader := <-changes:
			m.metrics.leadershipChanged()
			if !isLeader {
				m.stepDown()
				continue
			}
			if err := m.stepUp(ctx); err != nil {
				m.logger.Error("could not take over as leader", "error", err)
				m.stepDown()
			}
		case <-m.rebuild:
			m.mu.Lock()
			leading := m.leader != nil
			m.mu.Unlock()
			if !leading {
				continue
			}
			m.stepDown()
			if err := m.stepUp(ctx); err != nil {
				m.logger.Error("could not take over as leader again", "error", err)
				m.stepDown()
			}
		}
	}
}

// rebuildLeader has the leadership loop restart the leader services, which
// rebuild their soft state from the replicated state (after a restore).
func (m *Master) rebuildLeader() {
	select {
	case m.rebuild <- struct{}{}:
	default: // one is pending already
	}
}

// stepUp waits for a barrier so the state holds every committed command,
// rebuilds the leader's soft state from it, and only then serves.
func (m *Master) stepUp(ctx context.Context) error {
	bctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	if err := m.node.Barrier(bctx); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	l, err := newLeader(m, m.fsm.View())
	if err != nil {
		return err
	}
	if err := l.start(); err != nil {
		l.stop()
		return err
	}
	m.mu.Lock()
	m.leader = l
	m.mu.Unlock()
	m.logger.Info("serving as leader", "index", m.fsm.View().Index())
	return nil
}

func (m *Master) stepDown() {
	m.mu.Lock()
	l := m.leader
	m.leader = nil
	m.mu.Unlock()
	if l != nil {
		l.stop()
		m.logger.Info("stopped serving as leader")
	}
}

// NATSURL is the URL of this master's embedded NATS server (or the first
// external one).
func (m *Master) NATSURL() string {
	if m.nats != nil {
		return m.nats.ClientURL()
	}
	if len(m.cfg.NATS.External) > 0 {
		return m.cfg.NATS.External[0]
	}
	return ""
}

// NATSRouteURL is the route URL other masters' embedded servers connect to.
func (m *Master) NATSRouteURL() string {
	if m.nats == nil {
		return ""
	}
	return m.nats.RouteURL()
}

// stateView is the replicated state, nil before Run started it.
// natsServer is the embedded NATS server, nil when NATS is external or
// not started.
func (m *Master) natsServer() *server.Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nats == nil {
		return nil
	}
	return m.nats.srv
}

func (m *Master) stateView() *state.View {
	m.mu.Lock()
	fsm := m.fsm
	m.mu.Unlock()
	if fsm == nil {
		return nil
	}
	return fsm.View()
}

// outstandingOffers counts the leader's outstanding offers; false when this
// master does not lead.
func (m *Master) outstandingOffers() (int, bool) {
	return withAllocator(m, func(a *offers.Allocator) int { return len(a.Outstanding()) })
}

// withAllocator calls f with the leader's allocator, under the leader's
// lock, and returns what it returns; false on a follower.
func withAllocator[T any](m *Master, f func(*offers.Allocator) T) (T, bool) {
	m.mu.Lock()
	l := m.leader
	m.mu.Unlock()
	if l == nil {
		var zero T
		return zero, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return f(l.alloc), true
}

// roleShares returns the leader's role tree, roles only; false on a
// follower.
func (m *Master) roleShares() ([]offers.NodeShare, bool) {
	return withAllocator(m, (*offers.Allocator).Shares)
}

// fairShares returns the leader's H-DRF fair share of each declared
// framework (offers.Allocator.FairShares); false on a follower.
func (m *Master) fairShares() (map[protocol.FrameworkID]protocol.Resources, bool) {
	return withAllocator(m, (*offers.Allocator).FairShares)
}

// roleFairShares sums the frameworks' fair shares up the role tree: a
// role's is what its frameworks and those of the roles below it get.
func roleFairShares(fair map[protocol.FrameworkID]protocol.Resources, roleOf map[protocol.FrameworkID]string) map[string]protocol.Resources {
	out := map[string]protocol.Resources{}
	for id, role := range roleOf {
		share := fair[id]
		for r := role; ; {
			out[r] = out[r].Add(share)
			i := strings.LastIndexByte(r, '/')
			if i < 0 {
				break
			}
			r = r[:i]
		}
	}
	return out
}

// coflowCounts returns the leader's registered and completed coflows.
func (m *Master) coflowCounts() (int, uint64, bool) {
	m.mu.Lock()
	l := m.leader
	m.mu.Unlock()
	if l == nil {
		return 0, 0, false
	}
	active, completed := l.coflows.Stats()
	return active, completed, true
}

// IsLeader reports whether this master currently serves as the leader.
func (m *Master) IsLeader() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leader != nil
}

// ID is the master's Raft node ID.
func (m *Master) ID() string { return m.cfg.Raft.NodeID }

// RaftAddr is the master's Raft address.
func (m *Master) RaftAddr() string { return m.node.Addr() }

// View is the current replicated state (read-only).
func (m *Master) View() *state.View { return m.fsm.View() }

// Raft is the master's Raft node, for joining and membership.
func (m *Master) Raft() *raftstore.Node { return m.node }
