package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// stopTimeout bounds waiting for a master's Run to return.
const stopTimeout = 15 * time.Second

// masterProc is one master slot: its fixed identity (node ID, Raft
// address, data directory; the HTTP API takes a free port on every start) and the instance currently or last run
// in it.
type masterProc struct {
	id       string
	raftAddr string
	httpAddr string
	dataDir  string

	mu      sync.Mutex
	m       *master.Master
	cancel  context.CancelFunc
	done    chan struct{} // closed when Run returns
	runErr  error
	running bool
}

func (c *Cluster) newMasterProc(i int, raftPort int) *masterProc {
	p := &masterProc{id: "m" + strconv.Itoa(i), httpAddr: "127.0.0.1:0"}
	if c.opts.TCPRaft {
		p.raftAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(raftPort))
		p.dataDir = c.t.TempDir()
	} else {
		p.raftAddr = p.id
	}
	return p
}

// config builds master i's configuration. first is false for a restart:
// an in-memory node then starts empty and unbootstrapped, and catches up
// from the leader.
func (c *Cluster) config(i int, first bool) master.Config {
	p := c.masters[i]
	o := c.opts
	cfg := master.DefaultConfig()
	rc := raftstore.DefaultConfig()
	rc.NodeID = p.id
	rc.Peers = c.peers
	rc.Bootstrap = first || o.TCPRaft
	rc.HeartbeatTimeout = o.HeartbeatTimeout
	rc.ElectionTimeout = o.ElectionTimeout
	rc.LeaderLeaseTimeout = o.LeaderLeaseTimeout
	rc.CommitTimeout = o.CommitTimeout
	rc.ApplyTimeout = 5 * time.Second
	if o.TCPRaft {
		rc.DataDir = p.dataDir
		rc.BindAddr = p.raftAddr
		rc.AdvertiseAddr = p.raftAddr
	} else {
		rc.InMemory = true
		rc.Network = c.network
	}
	cfg.Raft = rc
	cfg.NATS = master.NATSConfig{External: []string{c.NATSURL()}}
	if c.tls != nil {
		cfg.NATS.TLS = master.NATSTLS{CA: c.tls.CA, Cert: c.tls.Cert, Key: c.tls.Key}
		if c.Authenticating() {
			cfg.NATS.TLS.Cert, cfg.NATS.TLS.Key = c.identityCert(protocol.Identity{Kind: protocol.KindMaster, Name: p.id})
		}
	} else if c.Authenticating() {
		cfg.NATS.MasterSecret = c.ids.masterSecret
	}
	if c.Authenticating() {
		cfg.AgentCredentials = c.ids.agents
	}
	cfg.SubjectPrefix = c.subj.Prefix
	cfg.HTTPAddr = p.httpAddr
	cfg.Roles = o.Roles
	cfg.AllocationInterval = o.AllocationInterval
	cfg.ShareUpdateInterval = o.ShareUpdateInterval
	cfg.FilesSecret = c.filesSecret
	cfg.OfferTimeout = o.OfferTimeout
	if o.DefaultRefuse > 0 {
		cfg.DefaultRefuse = o.DefaultRefuse
	}
	cfg.AgentHeartbeat = o.AgentHeartbeat
	cfg.AgentTimeout = o.AgentTimeout
	cfg.RequestTimeout = o.RequestTimeout
	cfg.Credentials = o.Credentials
	cfg.Logger = c.logger.Named(p.id)
	if o.Configure != nil {
		o.Configure(i, &cfg)
	}
	return cfg
}

// start runs master i and waits until its NATS connection and Raft node
// are up.
func (c *Cluster) start(i int, first bool) {
	c.t.Helper()
	p := c.masters[i]
	m, err := master.New(c.config(i, first))
	if err != nil {
		fatalf(c.t, "master %s: %v", p.id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.mu.Lock()
	p.m, p.cancel, p.done, p.runErr, p.running = m, cancel, done, nil, true
	p.mu.Unlock()
	go func() {
		err := m.Run(ctx)
		p.mu.Lock()
		p.runErr = err
		p.mu.Unlock()
		close(done)
	}()
	select {
	case <-m.Ready():
	case <-done:
		fatalf(c.t, "master %s stopped while starting: %v", p.id, p.err())
	case <-time.After(DefaultWait):
		fatalf(c.t, "master %s not ready after %s", p.id, DefaultWait)
	}
}

func (p *masterProc) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runErr
}

// stop cancels the running instance, if any, and waits for Run to return.
func (p *masterProc) stop() error {
	p.mu.Lock()
	cancel, done, running := p.cancel, p.done, p.running
	p.running = false
	p.mu.Unlock()
	if !running {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-time.After(stopTimeout):
		// What every goroutine waits on, to tell which part of the
		// master did not stop.
		var stacks bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		return fmt.Errorf("run did not return %s after cancel; goroutines:\n%s", stopTimeout, stacks.String())
	}
	if err := p.err(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

func (p *masterProc) instance() (*master.Master, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m, p.running
}

// Masters returns every master slot's current (or last) instance, by
// index; use Running to tell stopped ones.
func (c *Cluster) Masters() []*master.Master {
	out := make([]*master.Master, len(c.masters))
	for i, p := range c.masters {
		out[i], _ = p.instance()
	}
	return out
}

// HTTPAddrs returns the operator API addresses of the running masters.
func (c *Cluster) HTTPAddrs() []string {
	var out []string
	for i, p := range c.masters {
		if m, _ := p.instance(); m != nil && c.Running(i) {
			out = append(out, m.HTTPAddr())
		}
	}
	return out
}

// Master returns master i's current (or last) instance.
func (c *Cluster) Master(i int) *master.Master {
	m, _ := c.masters[i].instance()
	return m
}

// Running reports whether master i runs.
func (c *Cluster) Running(i int) bool {
	_, running := c.masters[i].instance()
	return running
}

// NodeID is master i's Raft node ID.
func (c *Cluster) NodeID(i int) string { return c.masters[i].id }

// LeaderIndex returns the index of the running master that serves as
// leader, or -1 when none does (or, briefly during a partition, more than
// one thinks it does).
func (c *Cluster) LeaderIndex() int {
	found := -1
	for i, p := range c.masters {
		if m, running := p.instance(); running && m.IsLeader() {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// Leader returns the serving leader, or nil when there is none.
func (c *Cluster) Leader() *master.Master {
	if i := c.LeaderIndex(); i >= 0 {
		return c.Master(i)
	}
	return nil
}

// WaitForLeader waits until exactly one running master serves as leader
// and returns it.
func (c *Cluster) WaitForLeader() *master.Master {
	c.t.Helper()
	var leader *master.Master
	testutil.WaitFor(c.t, DefaultWait, 5*time.Millisecond, func() error {
		if leader = c.Leader(); leader == nil {
			return errors.New("no single leader serves")
		}
		return nil
	})
	return leader
}

// Kill stops master i (cancels its Run and waits for it to return). Its
// Raft state stays on disk with TCPRaft; in memory it is gone.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	if err := c.masters[i].stop(); err != nil {
		fatalf(c.t, "kill master %s: %v", c.masters[i].id, err)
	}
}

// KillLeader kills the serving leader and returns its index, waiting for
// one to serve first (an election may be under way on a loaded machine).
// It fails the test when none comes within DefaultWait.
func (c *Cluster) KillLeader() int {
	c.t.Helper()
	i := -1
	if err := testutil.Poll(DefaultWait, 5*time.Millisecond, func() error {
		if i = c.LeaderIndex(); i < 0 {
			return errors.New("no single leader serves")
		}
		return nil
	}); err != nil {
		fatalf(c.t, "kill leader: %v", err)
	}
	c.Kill(i)
	return i
}

// Restart starts master i again with the same node ID, addresses and data
// directory; a running master is killed first. With TCPRaft it recovers
// its state from disk; in memory it starts empty and catches up from the
// leader.
func (c *Cluster) Restart(i int) *master.Master {
	c.t.Helper()
	c.Kill(i)
	c.start(i, false)
	return c.Master(i)
}

// Partition cuts master i's Raft traffic off from every other master
// (in-memory Raft only). Its NATS connection stays up.
func (c *Cluster) Partition(i int) {
	c.t.Helper()
	if c.network == nil {
		fatalf(c.t, "partition needs in-memory Raft")
	}
	c.network.Disconnect(c.masters[i].id)
}

// Heal restores every Raft link cut by Partition.
func (c *Cluster) Heal() {
	c.t.Helper()
	if c.network == nil {
		fatalf(c.t, "heal needs in-memory Raft")
	}
	c.network.Heal()
}
