package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// Raft timings for masters on loopback: quicker elections than the LAN
// defaults, so a dev cluster has a leader soon after it starts.
const (
	raftHeartbeatTimeout   = 500 * time.Millisecond
	raftElectionTimeout    = 500 * time.Millisecond
	raftLeaderLeaseTimeout = 250 * time.Millisecond
)

// pollInterval is how often Start checks for a leader.
const pollInterval = 50 * time.Millisecond

// Cluster is a running dev cluster. Its methods are safe for concurrent
// use.
type Cluster struct {
	cfg     Config
	layout  Layout
	resumed bool
	logger  hclog.Logger
	lock    *os.File

	ns      *server.Server
	masters []*master.Master
	agents  []*executor.Agent
	procs   []*proc // masters first, then agents, in start order

	failOnce sync.Once
	failed   chan struct{}
	mu       sync.Mutex
	failErr  error

	closeOnce sync.Once
	closeErr  error
}

// proc is one running component.
type proc struct {
	name     string
	isMaster bool
	cancel   context.CancelFunc
	done     chan struct{}
	err      error // set before done is closed
}

// Start starts a dev cluster on cfg.DataDir and returns once a leader
// serves and every agent has registered, or fails within
// cfg.StartTimeout (or when ctx ends), having stopped whatever it
// started. ctx bounds only the start: the cluster runs until Close.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockDataDir(filepath.Join(cfg.DataDir, lockFile))
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, logger: cfg.Logger.Named("dev"), lock: lock, failed: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	var found bool
	if c.layout, found, err = LoadLayout(cfg.DataDir); err != nil {
		return nil, err
	}
	c.resumed = found
	if found && (c.layout.FilesSecret == "" || !c.layout.Credentials.complete(c.layout)) {
		// A data directory from before these were kept gets them now.
		if c.layout.FilesSecret == "" {
			c.layout.FilesSecret = protocol.NewID("files")
		}
		if !c.layout.Credentials.complete(c.layout) {
			c.layout.Credentials = newCredentials(c.layout.Agents)
		}
		if err := c.layout.save(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if !found {
		if c.layout, err = newLayout(cfg); err != nil {
			return nil, err
		}
		// Saved before anything starts: the masters bootstrap with these
		// Raft addresses, so later starts must use them too.
		if err := c.layout.save(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if err := c.layout.checkPorts(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	if err := c.start(sctx); err != nil {
		return nil, err
	}
	ok = true
	c.logger.Info("dev cluster running", "data_dir", cfg.DataDir, "nats_url", c.NATSURL(), "resumed", c.resumed)
	return c, nil
}

// start starts NATS, the masters, waits for a leader, then starts the
// agents and waits until they are registered.
func (c *Cluster) start(ctx context.Context) error {
	var err error
	auth := c.layout.Credentials.natsAuth(protocol.Subjects{})
	auth.Logger = c.logger
	if c.ns, err = startNATS(c.layout.NATSAddr, auth, c.logger.Named("nats")); err != nil {
		return err
	}
	var peers []raftstore.Peer
	for _, m := range c.layout.Masters {
		peers = append(peers, raftstore.Peer{ID: m.ID, Address: m.RaftAddr})
	}
	for _, ml := range c.layout.Masters {
		m, err := master.New(c.masterConfig(ml, peers))
		if err != nil {
			return err
		}
		c.masters = append(c.masters, m)
		p := c.run("master "+ml.ID, true, m.Run)
		if err := c.await(ctx, p, m.Ready()); err != nil {
			return err
		}
	}
	if err := c.waitForLeader(ctx); err != nil {
		return err
	}
	for _, al := range c.layout.Agents {
		a, err := executor.New(c.agentConfig(al))
		if err != nil {
			return err
		}
		c.agents = append(c.agents, a)
		c.run("agent "+al.Name, false, a.Run)
	}
	for i, a := range c.agents {
		if err := c.await(ctx, c.procs[len(c.masters)+i], a.Ready()); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) masterConfig(ml MasterLayout, peers []raftstore.Peer) master.Config {
	mc := master.DefaultConfig()
	rc := mc.Raft
	rc.NodeID = ml.ID
	rc.DataDir = filepath.Join(c.cfg.DataDir, mastersDir, ml.ID)
	rc.BindAddr, rc.AdvertiseAddr = ml.RaftAddr, ml.RaftAddr
	rc.Peers = peers
	// A no-op when the node has Raft state: a restart recovers from it.
	rc.Bootstrap = true
	rc.HeartbeatTimeout, rc.ElectionTimeout = raftHeartbeatTimeout, raftElectionTimeout
	rc.LeaderLeaseTimeout = raftLeaderLeaseTimeout
	mc.Raft = rc
	mc.NATS = master.NATSConfig{External: []string{c.NATSURL()}, MasterSecret: c.layout.Credentials.MasterSecret}
	mc.HTTPAddr = ml.HTTPAddr
	mc.FilesSecret = c.layout.FilesSecret
	mc.Credentials = c.layout.Credentials.Frameworks
	mc.AgentCredentials = c.layout.Credentials.Agents
	mc.OperatorToken = c.layout.Credentials.OperatorToken
	if c.cfg.CoflowScheduler != "" {
		mc.CoflowScheduler = c.cfg.CoflowScheduler
	}
	mc.Logger = c.cfg.Logger
	return mc
}

func (c *Cluster) agentConfig(al AgentLayout) executor.Config {
	ec := executor.DefaultConfig()
	ec.NATSURLs = []string{c.NATSURL()}
	ec.Principal, ec.Secret = al.Name, c.layout.Credentials.Agents[al.Name]
	ec.WorkDir = filepath.Join(c.cfg.DataDir, agentsDir, al.Name)
	ec.Hostname = al.Hostname
	ec.Resources = al.Resources.Clone()
	ec.Attributes = protocol.Attributes{}
	for k, v := range al.Attributes {
		ec.Attributes[k] = protocol.ParseValue(v)
	}
	if c.cfg.Isolation != "" {
		ec.Isolation = c.cfg.Isolation
	}
	ec.Shim, ec.ShimEnv = c.cfg.AgentShim, c.cfg.AgentShimEnv
	if c.cfg.AgentShuffleSlots > 0 {
		ec.ShuffleSlots = c.cfg.AgentShuffleSlots
	}
	ec.ShuffleEgress = c.cfg.AgentShuffleEgress
	ec.ShuffleIngress = c.cfg.AgentShuffleIngress
	ec.HTTPAddr = al.HTTPAddr
	ec.FilesSecret = c.layout.FilesSecret
	ec.Logger = c.cfg.Logger.Named(al.Name)
	return ec
}

// run runs a component until Close; if it stops on its own, the cluster
// has failed.
func (c *Cluster) run(name string, isMaster bool, run func(context.Context) error) *proc {
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{name: name, isMaster: isMaster, cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	go func() {
		err := run(ctx)
		if ctx.Err() == nil {
			if err == nil {
				err = errors.New("stopped")
			}
			c.fail(fmt.Errorf("%s: %w", name, err))
		}
		p.err = err
		close(p.done)
	}()
	return p
}

func (c *Cluster) fail(err error) {
	c.failOnce.Do(func() {
		c.mu.Lock()
		c.failErr = err
		c.mu.Unlock()
		c.logger.Error("component stopped", "error", err)
		close(c.failed)
	})
}

// await waits until ready is closed, p stops, or ctx ends.
func (c *Cluster) await(ctx context.Context, p *proc, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-p.done:
		return fmt.Errorf("%s: %w", p.name, p.err)
	case <-ctx.Done():
		return fmt.Errorf("%w: %s not up: %w", ErrNotReady, p.name, ctx.Err())
	}
}

// waitForLeader polls until a master serves as the leader.
func (c *Cluster) waitForLeader(ctx context.Context) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for c.LeaderHTTPAddr() == "" {
		select {
		case <-t.C:
		case <-c.failed:
			return c.Err()
		case <-ctx.Done():
			return fmt.Errorf("%w: no leader elected: %w", ErrNotReady, ctx.Err())
		}
	}
	return nil
}

// Close stops the agents (their tasks keep running), then the masters,
// then NATS, and releases the data directory. It returns the components'
// errors; later calls return the same.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		procs := c.procs
		c.mu.Unlock()
		var errs []error
		for _, isMaster := range []bool{false, true} {
			var stopping []*proc
			for _, p := range procs {
				if p.isMaster == isMaster {
					p.cancel()
					stopping = append(stopping, p)
				}
			}
			for _, p := range stopping {
				<-p.done
				if p.err != nil && !errors.Is(p.err, context.Canceled) {
					errs = append(errs, fmt.Errorf("%s: %w", p.name, p.err))
				}
			}
		}
		if c.ns != nil {
			c.ns.Shutdown()
			c.ns.WaitForShutdown()
		}
		if c.lock != nil {
			c.lock.Close()
		}
		c.closeErr = errors.Join(errs...)
		c.logger.Info("dev cluster stopped", "data_dir", c.cfg.DataDir)
	})
	return c.closeErr
}

// Failed is closed when a master or agent stops on its own (Err says
// why); the cluster should then be closed.
func (c *Cluster) Failed() <-chan struct{} { return c.failed }

// Err returns why the cluster failed, or nil.
func (c *Cluster) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failErr
}

// DataDir returns the data directory.
func (c *Cluster) DataDir() string { return c.cfg.DataDir }

// Resumed reports whether the data directory already held a cluster.
func (c *Cluster) Resumed() bool { return c.resumed }

// Layout returns the cluster's layout.
func (c *Cluster) Layout() Layout { return c.layout }

// NATSURL returns the URL frameworks, agents and the CLI connect to.
func (c *Cluster) NATSURL() string { return "nats://" + c.layout.NATSAddr }

// HTTPAddrs returns every master's operator API address (host:port), in
// master order.
func (c *Cluster) HTTPAddrs() []string {
	var out []string
	for _, m := range c.layout.Masters {
		out = append(out, m.HTTPAddr)
	}
	return out
}

// LeaderHTTPAddr returns the operator API address of the master that
// serves as the leader, or "" during an election.
func (c *Cluster) LeaderHTTPAddr() string {
	for i, m := range c.masters {
		if m.IsLeader() {
			return c.layout.Masters[i].HTTPAddr
		}
	}
	return ""
}

// AgentIDs returns the agents' IDs, in agent order.
func (c *Cluster) AgentIDs() []protocol.AgentID {
	var out []protocol.AgentID
	for _, a := range c.agents {
		out = append(out, a.ID())
	}
	return out
}

// RunningTasks returns how many tasks the agents run (not yet terminal):
// the ones that keep running after Close.
func (c *Cluster) RunningTasks() int {
	n := 0
	for _, a := range c.agents {
		for _, t := range a.State().Tasks {
			if !t.State.Terminal() {
				n++
			}
		}
	}
	return n
}
