package raftstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Node is one member of a Raft cluster: a hashicorp/raft server with its stores,
// transport, leadership channel and group-commit Apply. Create it with New; all methods
// are safe for concurrent use.
type Node struct {
	cfg          Config
	logger       hclog.Logger
	raft         *raft.Raft
	stores       *stores
	batcher      *batcher
	leader       *leaderNotifier
	bootstrapped bool // this start created a new cluster

	shutdownCh   chan struct{} // closed when Shutdown starts
	stopped      chan struct{} // closed when the batcher has answered everything
	wg           sync.WaitGroup
	shutdownOnce sync.Once
	shutdownErr  error
}

// New opens the stores, starts the transport and the Raft server, and, with
// cfg.Bootstrap and no existing state, bootstraps a new cluster from cfg.Peers (whose
// first peer then stands for election at once). It returns once the server runs; it
// does not wait for a leader (watch LeaderChanges or poll Leader). fsm must not be nil.
func New(cfg Config, fsm FSM) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if fsm == nil {
		return nil, fmt.Errorf("%w: fsm is nil", ErrInvalidConfig)
	}
	base := cfg.Logger
	if base == nil {
		base = hclog.NewNullLogger()
	}
	logger := base.Named("raftstore")
	leader := newLeaderNotifier()
	rc, err := cfg.raftConfig(base.Named("raft"), leader.in)
	if err != nil {
		return nil, err
	}
	st, err := openStores(cfg, logger)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg:        cfg,
		logger:     logger,
		stores:     st,
		leader:     leader,
		shutdownCh: make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	if !cfg.InMemory {
		if err := claimDataDir(cfg.DataDir, cfg.NodeID); err != nil {
			return nil, errors.Join(err, st.closeTransport(), st.closeStores())
		}
	}
	if cfg.Bootstrap {
		if n.bootstrapped, err = bootstrap(cfg, rc, st); err != nil {
			return nil, errors.Join(err, st.closeTransport(), st.closeStores())
		}
	}
	adapter := &fsmAdapter{fsm: fsm, logger: logger.Named("fsm")}
	r, err := raft.NewRaft(rc, adapter, st.logs, st.stable, st.snaps, st.trans)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start raft: %w", err), st.closeTransport(), st.closeStores())
	}
	n.raft = r
	n.batcher = newBatcher(r, cfg, logger, n.translate, n.shutdownCh)
	n.wg.Add(2)
	go func() { defer n.wg.Done(); n.batcher.run() }()
	go func() { defer n.wg.Done(); n.leader.run(n.shutdownCh) }()
	if !cfg.InMemory && cfg.LeaderLeaseTimeout < cfg.HeartbeatTimeout {
		watch := newLeaderWatch(raftWatched{r}, cfg.NodeID, cfg.LeaderLeaseTimeout, logger.Named("leader_watch"))
		n.wg.Add(1)
		go func() { defer n.wg.Done(); watch.run(n.shutdownCh) }()
	}
	logger.Info("raft node started", "node_id", cfg.NodeID, "addr", st.addr,
		"in_memory", cfg.InMemory, "bootstrapped", n.bootstrapped)
	if diff := n.peersDiffer(); diff != "" && !n.bootstrapped {
		logger.Warn("the peers given are ignored: they only bootstrap a new cluster; change members with add-peer and remove-peer", "difference", diff)
	}
	if n.bootstrapped && (len(cfg.Peers) == 0 || cfg.Peers[0].ID == cfg.NodeID) {
		// A new cluster elects its first leader now rather than a heartbeat
		// timeout or two from now: the first peer listed stands at once.
		if err := n.StandForElection(); err != nil {
			logger.Debug("stand for election", "error", err)
		}
	}
	return n, nil
}

// bootstrap creates a new cluster from cfg.Peers (plus this node) if the stores hold no
// state. It reports whether it did.
func bootstrap(cfg Config, rc *raft.Config, st *stores) (bool, error) {
	exists, err := raft.HasExistingState(st.logs, st.stable, st.snaps)
	if err != nil {
		return false, fmt.Errorf("check raft state: %w", err)
	}
	if exists {
		return false, nil
	}
	servers := []raft.Server{{Suffrage: raft.Voter, ID: rc.LocalID, Address: st.addr}}
	self := len(cfg.Peers) == 0
	for _, p := range cfg.Peers {
		if p.ID == cfg.NodeID {
			if !sameAddr(cfg.InMemory, p.Address, string(st.addr)) {
				return false, fmt.Errorf("%w: peer entry for this node has address %s, but it advertises %s",
					ErrInvalidConfig, p.Address, st.addr)
			}
			self = true
			continue
		}
		servers = append(servers, raft.Server{
			Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address),
		})
	}
	if !self {
		// Every member must bootstrap from the same, complete list, or two members could
		// start different clusters.
		return false, fmt.Errorf("%w: peers do not include this node (%s)", ErrInvalidConfig, cfg.NodeID)
	}
	err = raft.BootstrapCluster(rc, st.logs, st.stable, st.snaps, st.trans, raft.Configuration{Servers: servers})
	if err != nil {
		return false, fmt.Errorf("bootstrap cluster: %w", err)
	}
	return true, nil
}

// sameAddr reports whether two Raft addresses name the same endpoint: equal strings, or
// for TCP, host names that resolve to the same IP and port.
func sameAddr(inMemory bool, a, b string) bool {
	if a == b || inMemory {
		return a == b
	}
	ta, errA := net.ResolveTCPAddr("tcp", a)
	tb, errB := net.ResolveTCPAddr("tcp", b)
	return errA == nil && errB == nil && ta.String() == tb.String()
}

// Shutdown stops the node: pending Apply calls fail with ErrShutdown (entries already
// handed to Raft get their real outcome if it is known in time), Raft stops, and the
// transport and stores close. It is not a graceful leave: the node stays a member. Safe
// to call more than once; later calls return the first result.
func (n *Node) Shutdown() error {
	n.shutdownOnce.Do(func() {
		close(n.shutdownCh)
		// Raft drops the entries still in its apply queue when it shuts
		// down, leaving their futures unanswered for ever; entries in
		// flight get their answer first (committed, or refused once the
		// node is no leader), for as long as a leader may keep leading
		// without a quorum.
		select {
		case <-n.batcher.drained:
		case <-time.After(2 * n.cfg.LeaderLeaseTimeout):
		}
		err := n.raft.Shutdown().Error() // also closes the transport
		close(n.batcher.raftDown)
		// Closing the transport stops its listener, not the connections
		// it pooled to its peers, whose servers would wait on them for
		// ever: close those too.
		if c, ok := n.stores.trans.(interface{ CloseStreams() }); ok {
			c.CloseStreams()
		}
		n.wg.Wait()
		close(n.stopped)
		n.leader.stepDown()
		n.shutdownErr = errors.Join(err, n.stores.closeStores())
		n.logger.Info("raft node stopped", "node_id", n.cfg.NodeID)
	})
	return n.shutdownErr
}

// ID returns this node's ID.
func (n *Node) ID() string { return n.cfg.NodeID }

// Addr returns this node's advertised Raft address (with the real port if BindAddr used
// port 0).
func (n *Node) Addr() string { return string(n.stores.addr) }

// IsLeader reports whether this node is the leader right now.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Running reports whether the node's Raft still runs (it has not shut down).
func (n *Node) Running() bool { return n.raft.State() != raft.Shutdown }

// Leader returns the current leader's ID and address as this node knows them; both are
// empty when no leader is known.
func (n *Node) Leader() (id, addr string) {
	a, i := n.raft.LeaderWithID()
	return string(i), string(a)
}

// LeaderChanges returns a channel that receives true when this node becomes leader and
// false when it stops being leader (including at Shutdown). It holds only the latest
// state: a reader that falls behind sees the current state, not every transition, so a
// true received while already leading means leadership was lost and won again (run the
// barrier again). There is one channel per Node; it is never closed.
func (n *Node) LeaderChanges() <-chan bool { return n.leader.out }

// AppliedIndex returns the index of the last log entry applied to the FSM.
func (n *Node) AppliedIndex() uint64 { return n.raft.AppliedIndex() }

// CommitIndex returns the index of the last log entry this node knows committed.
func (n *Node) CommitIndex() uint64 { return n.raft.CommitIndex() }

// LastContact returns when this node last heard from the leader (zero if never; for the
// leader itself, now).
func (n *Node) LastContact() time.Time {
	if n.IsLeader() {
		return time.Now()
	}
	return n.raft.LastContact()
}

// readyLag is how many committed entries a node may have left to apply
// and still count as caught up.
const readyLag = 64

// Ready says why this node cannot serve reads that must be current, or ""
// when it can: it runs, knows a leader, has heard from it within twice
// the heartbeat timeout (a follower), and has applied all but readyLag of
// the entries it knows committed.
func (n *Node) Ready() string {
	switch n.raft.State() {
	case raft.Shutdown:
		return "raft is shut down"
	case raft.Candidate:
		return "electing a leader"
	case raft.Follower:
		if id, _ := n.Leader(); id == "" {
			return "no leader is known"
		}
		if last := n.raft.LastContact(); time.Since(last) > 2*n.cfg.HeartbeatTimeout {
			return fmt.Sprintf("no contact with the leader for %s", time.Since(last).Round(time.Millisecond))
		}
	}
	if applied, commit := n.raft.AppliedIndex(), n.raft.CommitIndex(); applied+readyLag < commit {
		return fmt.Sprintf("catching up: applied %d of %d committed entries", applied, commit)
	}
	return ""
}

// Barrier blocks until every entry committed before the call has been applied to this
// node's FSM. Leader only: a new leader calls it before acting on FSM state.
func (n *Node) Barrier(ctx context.Context) error {
	return n.wait(ctx, n.raft.Barrier(n.enqueueTimeout(ctx)))
}

// TakeSnapshot makes Raft snapshot the FSM now and compact the log. It returns when the
// snapshot is on disk; with nothing applied since the last snapshot it returns nil.
func (n *Node) TakeSnapshot() error {
	err := n.raft.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot: %w", n.translate(err))
	}
	return nil
}

// Term is the current Raft term: while this node leads, the term it was
// elected in.
func (n *Node) Term() uint64 { return n.raft.CurrentTerm() }

// Stats returns Raft's statistics (state, term, indexes, peers...) plus group commit's:
// batch_entries and batch_commands (totals handed to Raft by this node) and
// apply_pending (Apply calls in progress).
func (n *Node) Stats() map[string]string {
	s := n.raft.Stats()
	s["node_id"] = n.cfg.NodeID
	s["batch_entries"] = strconv.FormatUint(n.batcher.entries.Load(), 10)
	s["batch_commands"] = strconv.FormatUint(n.batcher.commands.Load(), 10)
	s["apply_pending"] = strconv.FormatInt(n.batcher.pending.Load(), 10)
	return s
}

// translate maps a Raft error onto our sentinels, naming the leader when not leader.
func (n *Node) translate(err error) error {
	return translate(err, n.Leader)
}

// notLeader returns the NotLeaderError for this node now.
func (n *Node) notLeader() error {
	return n.translate(raft.ErrNotLeader)
}
