package testcluster

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/simagent"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// Defaults for Options fields left zero.
const (
	DefaultMasters            = 3
	DefaultAllocationInterval = 20 * time.Millisecond
	DefaultAgentHeartbeat     = 100 * time.Millisecond
	DefaultAgentTimeout       = 5 * time.Second
	DefaultRequestTimeout     = 2 * time.Second
	// DefaultHeartbeatTimeout is Raft's heartbeat and election timeout:
	// long enough that a leader survives the test machine being starved
	// of CPU for a while (four busy loops on two cores, say), so that a
	// test that does not exercise failover never sees one. A new cluster
	// still elects at once (its first peer stands for election), and a
	// killed leader is replaced within one to two of it.
	DefaultHeartbeatTimeout = 500 * time.Millisecond
	// DefaultWait bounds the helpers that wait for something to happen.
	DefaultWait = 10 * time.Second
)

// DefaultAgentResources are a test agent's resources unless set: 4 CPUs
// and 4 GiB (simagent.DefaultResources).
func DefaultAgentResources() protocol.Resources { return simagent.DefaultResources() }

// Options configures a test cluster. The zero value is three in-memory
// masters, no agents, and short timeouts.
type Options struct {
	// Masters is the number of masters (default 3).
	Masters int
	// Agents is the number of test agents New starts, each with Agent as
	// a template plus AgentResources and AgentAttributes(i).
	Agents int
	// TCPRaft runs Raft over TCP on loopback with data directories under
	// t.TempDir(), so restarted masters recover from disk; the default is
	// the in-memory transport, which Partition and Heal need.
	TCPRaft bool
	// AgentResources are the resources of the agents New starts (default
	// DefaultAgentResources).
	AgentResources protocol.Resources
	// AgentAttributes, when set, gives agent i's attributes.
	AgentAttributes func(i int) protocol.Attributes
	// Agent is the template for the agents New starts.
	Agent AgentOptions
	// Roles are role weights by path (master.Config.Roles).
	Roles map[string]float64
	// AllocationInterval, OfferTimeout, DefaultRefuse, AgentHeartbeat,
	// AgentTimeout and RequestTimeout go to master.Config; zero picks the
	// package defaults (OfferTimeout zero means offers never expire, and
	// DefaultRefuse zero keeps the master's default).
	AllocationInterval time.Duration
	// ShareUpdateInterval goes to master.Config (default 100ms).
	ShareUpdateInterval time.Duration
	OfferTimeout        time.Duration
	DefaultRefuse       time.Duration
	AgentHeartbeat      time.Duration
	AgentTimeout        time.Duration
	RequestTimeout      time.Duration
	// HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout and
	// CommitTimeout tune Raft (defaults DefaultHeartbeatTimeout twice,
	// nine tenths of it, and 5ms: `allot master`'s).
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// Credentials, principal to secret, are the framework principals
	// (master.Config.Credentials). With them the cluster authenticates, as
	// with Authenticate.
	Credentials map[string]string
	// Authenticate runs the cluster as a production one with credentials
	// does: its NATS server admits only authenticated connections and
	// confines each to its identity's subjects (package natsauth), the
	// masters connect with their secret, every agent has its own
	// credential, and frameworks connect as principals of Credentials.
	Authenticate bool
	// Configure, when set, edits master i's configuration last.
	Configure func(i int, cfg *master.Config)
	// NATSTLS runs the cluster's NATS server over mutual TLS with a fresh
	// test CA: every client, masters and agents included, needs the
	// certificate (TLSFiles).
	NATSTLS bool
}

func (o *Options) setDefaults() {
	if o.Masters == 0 {
		o.Masters = DefaultMasters
	}
	if o.AgentResources.IsEmpty() {
		o.AgentResources = DefaultAgentResources()
	}
	setDur := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	setDur(&o.AllocationInterval, DefaultAllocationInterval)
	setDur(&o.ShareUpdateInterval, 100*time.Millisecond)
	setDur(&o.AgentHeartbeat, DefaultAgentHeartbeat)
	setDur(&o.AgentTimeout, DefaultAgentTimeout)
	setDur(&o.RequestTimeout, DefaultRequestTimeout)
	setDur(&o.HeartbeatTimeout, DefaultHeartbeatTimeout)
	setDur(&o.ElectionTimeout, DefaultHeartbeatTimeout)
	setDur(&o.LeaderLeaseTimeout, DefaultHeartbeatTimeout*9/10)
	setDur(&o.CommitTimeout, 5*time.Millisecond)
}

// Cluster is a running test cluster. Its methods must be called from the
// test's goroutine.
type Cluster struct {
	t      testing.TB
	opts   Options
	logger hclog.Logger
	subj   protocol.Subjects
	// filesSecret is the masters' and agents' files secret.
	filesSecret string
	// ids are the credentials of an authenticating cluster.
	ids identities
	// certs are the client certificates issued, by identity (guarded by
	// mu).
	certs map[protocol.Identity][2]string

	ns  *server.Server
	tls *testutil.TLSFiles // with Options.NATSTLS
	// authority issues the clients' certificates (Options.NATSTLS).
	authority *testutil.TLSAuthority
	network   *raftstore.InmemNetwork // nil with TCPRaft
	peers     []raftstore.Peer

	mu         sync.Mutex
	masters    []*masterProc
	agents     []*TestAgent
	frameworks []*TestFramework
	conns      []*nats.Conn

	closeOnce sync.Once
}

// New starts a cluster and waits until a leader serves; everything stops
// when the test ends.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	opts.setDefaults()
	c := &Cluster{
		t:      t,
		opts:   opts,
		logger: testlog.New(t),
		subj:   protocol.Subjects{Prefix: protocol.DefaultSubjectPrefix},

		filesSecret: protocol.NewID("files"),
		ids:         newIdentities(),
	}
	t.Cleanup(c.Close)
	c.startNATS()
	if !opts.TCPRaft {
		c.network = raftstore.NewInmemNetwork()
	}
	c.masters = make([]*masterProc, opts.Masters)
	var ports []int
	if opts.TCPRaft {
		ports = testutil.FreePorts(t, opts.Masters)
	}
	for i := range c.masters {
		port := 0
		if ports != nil {
			port = ports[i]
		}
		c.masters[i] = c.newMasterProc(i, port)
	}
	for i := range c.masters {
		c.peers = append(c.peers, raftstore.Peer{ID: c.masters[i].id, Address: c.masters[i].raftAddr})
	}
	// The first peer (m0) stands for election when it bootstraps; started
	// last, it finds the others up and wins at once.
	for i := len(c.masters) - 1; i >= 0; i-- {
		c.start(i, true)
	}
	c.WaitForLeader()
	for i := 0; i < opts.Agents; i++ {
		ao := opts.Agent
		ao.Resources = opts.AgentResources
		if opts.AgentAttributes != nil {
			ao.Attributes = opts.AgentAttributes(i)
		}
		c.NewAgent(ao)
	}
	return c
}

func (c *Cluster) startNATS() {
	c.t.Helper()
	opts := &server.Options{
		Host:       "127.0.0.1",
		Port:       -1,
		NoLog:      true,
		NoSigs:     true,
		MaxPayload: 8 << 20,
	}
	if c.opts.NATSTLS {
		c.authority = testutil.NewTLSAuthority(c.t)
		files := c.authority.TLSFiles
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: files.Cert, KeyFile: files.Key, CaFile: files.CA, Verify: true})
		if err != nil {
			c.t.Fatalf("nats tls: %v", err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify, opts.TLSTimeout = tc, true, true, 2
		c.tls = &files
	}
	if c.Authenticating() {
		if err := c.natsAuth().Apply(opts); err != nil {
			c.t.Fatalf("nats authentication: %v", err)
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		c.t.Fatalf("nats server: %v", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		c.t.Fatal("nats server not ready after 10s")
	}
	c.ns = ns
}

// NATSURL is the URL of the cluster's NATS server.
func (c *Cluster) NATSURL() string { return c.ns.ClientURL() }

// TLSFiles are the CA and the client certificate of a cluster whose NATS
// server wants TLS (Options.NATSTLS); ok is false otherwise.
func (c *Cluster) TLSFiles() (files testutil.TLSFiles, ok bool) {
	if c.tls == nil {
		return testutil.TLSFiles{}, false
	}
	return *c.tls, true
}

// Agents returns the test agents started so far.
func (c *Cluster) Agents() []*TestAgent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*TestAgent(nil), c.agents...)
}

// Frameworks returns the test frameworks started so far.
func (c *Cluster) Frameworks() []*TestFramework {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*TestFramework(nil), c.frameworks...)
}

// Close stops clients, then masters, then NATS. The end of the test calls
// it; a benchmark that starts a cluster per iteration calls it sooner.
func (c *Cluster) Close() { c.closeOnce.Do(c.shutdown) }

func (c *Cluster) shutdown() {
	c.mu.Lock()
	agents, frameworks, conns := c.agents, c.frameworks, c.conns
	c.mu.Unlock()
	for _, f := range frameworks {
		f.Close()
	}
	for _, a := range agents {
		a.Close()
	}
	for _, nc := range conns {
		nc.Close()
	}
	var wg sync.WaitGroup
	for _, p := range c.masters {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.stop(); err != nil {
				c.t.Errorf("master %s: %v", p.id, err)
			}
		}()
	}
	wg.Wait()
	if c.ns != nil {
		c.ns.Shutdown()
		c.ns.WaitForShutdown()
	}
}

func fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatalf("testcluster: %s", fmt.Sprintf(format, args...))
}

// Subjects are the cluster's NATS subjects.
func (c *Cluster) Subjects() protocol.Subjects { return c.subj }

// FilesSecret is the cluster's files secret: agents started against the
// cluster should use it (executor.Config.FilesSecret), as the masters do.
func (c *Cluster) FilesSecret() string { return c.filesSecret }
