package master

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/natsauth"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// Peer is one master of the Raft group: its node ID and Raft address.
type Peer = raftstore.Peer

// Config configures a master.
type Config struct {
	// Raft configures the replicated log: node ID, data directory, bind and
	// advertise addresses, the peer list for bootstrap, timeouts.
	Raft raftstore.Config
	// NATS says whether to embed a NATS server or use external ones.
	NATS NATSConfig
	// SubjectPrefix starts every NATS subject (default "allot").
	SubjectPrefix string
	// HTTPAddr is the operator API's listen address; empty disables it.
	HTTPAddr string
	// Roles are configured role weights by path (others default to 1).
	Roles map[string]float64
	// Policy is the allocation policy (default "dynamic").
	Policy string
	// LeftoverOrder is how the leftover pool is shared: "jct-first"
	// (default) or "efficiency-first" (see offers.LeftoverOrder).
	LeftoverOrder string
	// Placement orders the agents' turns in a round: "spread" (default),
	// "first-fit" or "pack" (see offers.Placement, docs/placement.md).
	Placement string
	// CoflowScheduler orders the shuffles (coflows) frameworks register:
	// "philae" (default) or another scheduler of package coflow.
	CoflowScheduler string
	// Preemption says when the leader takes resources back for guarantees,
	// fair shares and lent (revocable) resources (docs/preemption.md).
	Preemption PreemptionConfig
	// AllocationInterval is how often an allocation round runs at the
	// latest while rounds are fast; events trigger earlier rounds. A round
	// follows the last one by ten times its duration, up to ten intervals
	// (round_gap.go), whatever asked for it.
	AllocationInterval time.Duration
	// ShareUpdateInterval is how often, at most, the leader recomputes the
	// frameworks' fair shares and sends a ShareUpdateEvent to each whose
	// share changed (zero: after every allocation round).
	ShareUpdateInterval time.Duration
	// OfferTimeout rescinds offers held longer (zero: never).
	OfferTimeout time.Duration
	// DefaultRefuse is the refuse filter of a decline that names none.
	DefaultRefuse time.Duration
	// AgentHeartbeat is how often agents are asked to heartbeat.
	AgentHeartbeat time.Duration
	// AgentTimeout marks an agent unreachable after this long without a
	// heartbeat.
	AgentTimeout time.Duration
	// MaxHeartbeatsPerSecond bounds the heartbeats the leader asks of all
	// agents together (Nomad's max_heartbeats_per_second): with more
	// agents than AgentHeartbeat allows at this rate, each is asked to
	// heartbeat less often, and the agent timeout grows to three of its
	// intervals if that is longer (heartbeat_pace.go). Zero: no bound.
	MaxHeartbeatsPerSecond float64
	// AgentRemovalLimit is a safety valve, as Mesos's agent removal limit:
	// when more than this fraction of the agents the leader tracks miss
	// their heartbeats at once, it marks none of them unreachable (more
	// likely the master is cut off than the agents gone) until fewer do.
	// 0 or 1: no limit.
	AgentRemovalLimit float64
	// FilesSecret is the agents' files secret (executor.Config.FilesSecret):
	// with it, each framework's SubscribeReply carries the token that reads
	// its sandboxes on every agent. Empty gives frameworks no token.
	FilesSecret string
	// FilesTokenTTL is how long a files token the masters hand out stays
	// valid (default 24h); connected frameworks get fresh ones with their
	// heartbeats.
	FilesTokenTTL time.Duration
	// Credentials, principal to secret, are the framework principals: a
	// framework connects to NATS as "framework.<principal>" with its secret
	// and may then use only its own principal's subjects (package
	// natsauth, docs/security.md). With any credential configured (here,
	// AgentCredentials, NATS.MasterSecret or verified client certificates)
	// the embedded NATS server admits only authenticated connections.
	// Empty, and no other credential: nobody is authenticated, principals
	// are what frameworks claim.
	Credentials map[string]string
	// AgentCredentials, name to secret, are the agents' credentials: an
	// agent connects as "agent.<name>" and acts only as the agents it
	// registered with that credential.
	AgentCredentials map[string]string
	// MaxAgentsPerCredential caps the agents one agent credential may
	// hold registered (active or draining) at once; a registration beyond
	// it is refused with ErrLimitExceeded. 0: no cap.
	MaxAgentsPerCredential int
	// AgentRateLimit bounds the calls the agents of one credential make
	// (each agent on its own where agents are not authenticated); calls over
	// it are refused with ErrRateLimited. Zero QPS: no limit.
	AgentRateLimit RateLimit
	// RoleACLs, when set, say which roles each principal may subscribe
	// frameworks into (patterns: "eng/prod", "eng/*" for every role under
	// eng, "*" for any); a principal not listed may use none, and a
	// subscribe outside its roles is refused with ErrUnauthorized. Nil:
	// every principal may use every role.
	RoleACLs map[string][]string
	// RunAsACLs, when set, say which Unix users each principal's tasks may
	// run as ("*" for any; Mesos's run_tasks ACL); a launch as another user
	// is refused with ErrUnauthorized. Tasks that name no user, of a
	// framework that names none, run as the agents' default task user and
	// are always allowed. Nil: any user.
	RunAsACLs map[string][]string
	// FrameworkRateLimit bounds the calls each principal's frameworks make
	// (all of them together); calls over it are refused with
	// ErrRateLimited. Zero QPS: no limit.
	FrameworkRateLimit RateLimit
	// OperatorToken, when set, is the bearer token the operator API's
	// actions (draining agents) need. Empty: they are open to anyone who
	// reaches HTTPAddr (loopback by default).
	OperatorToken string
	// EnableDebug serves the Go runtime's profiles under /debug/pprof/ on
	// the HTTP API, to the operator only (http_debug.go). Off by default.
	EnableDebug bool
	// StatusRetryInterval is how long a connected framework has to
	// acknowledge a status update before the leader sends it again; each
	// further resend waits twice as long, up to ten minutes. Zero: 10 s.
	StatusRetryInterval time.Duration
	// RequestTimeout bounds the work behind one API request.
	RequestTimeout time.Duration
	// Logger receives the master's logs (nil discards them).
	Logger hclog.Logger
}

// DefaultConfig returns the defaults `allot master` runs with.
func DefaultConfig() Config {
	r := raftstore.DefaultConfig()
	r.BindAddr = "127.0.0.1:7000"
	return Config{
		Raft:                r,
		NATS:                DefaultNATSConfig(),
		SubjectPrefix:       "allot",
		HTTPAddr:            "127.0.0.1:5050",
		Policy:              string(offers.PolicyDynamic),
		LeftoverOrder:       string(offers.LeftoverJCTFirst),
		CoflowScheduler:     string(coflow.SchedulerPhilae),
		AllocationInterval:  100 * time.Millisecond,
		Preemption:          DefaultPreemptionConfig(),
		ShareUpdateInterval: time.Second,
		OfferTimeout:        30 * time.Second,
		DefaultRefuse:       5 * time.Second,
		AgentHeartbeat:      time.Second,
		AgentTimeout:        15 * time.Second,
		// 10,000 agents at one heartbeat every 10 s and a 30 s agent
		// timeout (Mesos's is 75 s at any size); up to 5,000 the timeout
		// stays AgentTimeout (docs/benchmarks.md, "Scale").
		MaxHeartbeatsPerSecond: 1000,
		StatusRetryInterval:    defaultStatusRetryInterval,
		RequestTimeout:         10 * time.Second,
		FilesTokenTTL:          defaultFilesTokenTTL,
		// One registered agent per credential: each machine has its own
		// (as Mesos's agent principals); a fleet that shares one raises it.
		MaxAgentsPerCredential: 1,
		// Far above what an agent sends (a heartbeat a second and batched
		// status updates), low enough to bound a runaway or hostile one.
		AgentRateLimit: RateLimit{QPS: 100, Burst: 1000},
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if err := c.Raft.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err := c.NATS.Validate(); err != nil {
		return err
	}
	if err := (protocol.Subjects{Prefix: c.SubjectPrefix}).Validate(); err != nil {
		return fmt.Errorf("%w: subject prefix: %v", ErrConfig, err)
	}
	if _, err := offers.ParsePolicy(c.Policy); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if _, err := offers.ParsePlacement(c.Placement); err != nil {
		return fmt.Errorf("%w: placement: %w", ErrConfig, err)
	}
	if _, err := offers.ParseLeftoverOrder(c.LeftoverOrder); c.LeftoverOrder != "" && err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if _, err := coflow.ParseScheduler(c.CoflowScheduler); c.CoflowScheduler != "" && err != nil {
		return fmt.Errorf("%w: coflow scheduler: %v", ErrConfig, err)
	}
	if err := c.Preemption.Validate(); err != nil {
		return err
	}
	for path, w := range c.Roles {
		if !protocol.ValidRole(path) || !(w > 0) {
			return fmt.Errorf("%w: role %q weight %v", ErrConfig, path, w)
		}
	}
	for name, d := range map[string]time.Duration{
		"allocation interval": c.AllocationInterval, "agent heartbeat": c.AgentHeartbeat,
		"agent timeout": c.AgentTimeout, "request timeout": c.RequestTimeout,
	} {
		if d <= 0 {
			return fmt.Errorf("%w: %s must be positive", ErrConfig, name)
		}
	}
	if c.OfferTimeout < 0 || c.DefaultRefuse < 0 || c.ShareUpdateInterval < 0 || c.StatusRetryInterval < 0 || c.FilesTokenTTL < 0 {
		return fmt.Errorf("%w: negative offer timeout, refuse filter, share update or status retry interval", ErrConfig)
	}
	if c.authenticating() {
		// The names and secrets of every credential, as the NATS servers
		// will take them.
		if err := c.natsAuth().Validate(); err != nil {
			return fmt.Errorf("%w: credentials: %v", ErrConfig, err)
		}
	}
	if c.MaxAgentsPerCredential < 0 || c.AgentRateLimit.QPS < 0 || c.AgentRateLimit.Burst < 0 || c.MaxHeartbeatsPerSecond < 0 {
		return fmt.Errorf("%w: negative agents per credential, agent rate limit or heartbeats per second", ErrConfig)
	}
	for principal, patterns := range c.RoleACLs {
		for _, p := range patterns {
			if !validRolePattern(p) {
				return fmt.Errorf("%w: role ACLs: principal %q: %q is not a role, role/* or *", ErrConfig, principal, p)
			}
		}
	}
	if c.FrameworkRateLimit.QPS < 0 || c.FrameworkRateLimit.Burst < 0 {
		return fmt.Errorf("%w: negative framework rate limit", ErrConfig)
	}
	if !(c.AgentRemovalLimit >= 0 && c.AgentRemovalLimit <= 1) {
		return fmt.Errorf("%w: agent removal limit %v: want a fraction from 0 to 1", ErrConfig, c.AgentRemovalLimit)
	}
	if c.authenticating() && c.NATS.Embedded() && c.NATS.MasterSecret == "" && !c.NATS.TLS.VerifyClients {
		return fmt.Errorf("%w: credentials are configured, so the embedded NATS server authenticates every connection: "+
			"the masters need a master secret (--nats-master-secret) or verified client certificates (--nats-tls-verify)", ErrConfig)
	}
	if c.AgentTimeout <= c.AgentHeartbeat {
		return fmt.Errorf("%w: agent timeout %s must exceed the heartbeat %s", ErrConfig, c.AgentTimeout, c.AgentHeartbeat)
	}
	return nil
}

func (c Config) subjects() protocol.Subjects { return protocol.Subjects{Prefix: c.SubjectPrefix} }

// defaultFilesTokenTTL is how long files tokens stay valid by default.
const defaultFilesTokenTTL = 24 * time.Hour

// filesToken is framework id's files token as of now, or "" without a
// files secret. Its expiry is rounded to the hour, so the token a
// framework holds changes once an hour rather than with every heartbeat.
func (c Config) filesToken(id protocol.FrameworkID, now time.Time) string {
	if c.FilesSecret == "" {
		return ""
	}
	ttl := c.FilesTokenTTL
	if ttl <= 0 {
		ttl = defaultFilesTokenTTL
	}
	return protocol.FrameworkFilesToken(c.FilesSecret, id, now.Add(ttl).Truncate(time.Hour).Add(time.Hour))
}

// authenticating reports whether the cluster authenticates its NATS
// connections: some credential is configured.
func (c Config) authenticating() bool {
	return len(c.Credentials) > 0 || len(c.AgentCredentials) > 0 || c.NATS.MasterSecret != "" || c.NATS.TLS.VerifyClients
}

// natsAuth is what the embedded NATS server authenticates with.
func (c Config) natsAuth() natsauth.Config {
	return natsauth.Config{
		Subjects:      c.subjects(),
		MasterSecret:  c.NATS.MasterSecret,
		Frameworks:    c.Credentials,
		Agents:        c.AgentCredentials,
		OperatorToken: c.OperatorToken,
		Certificates:  c.NATS.TLS.VerifyClients,
		Logger:        c.Logger,
	}
}

// defaultStatusRetryInterval is Mesos's first status update retry.
const defaultStatusRetryInterval = 10 * time.Second

func (c Config) statusRetryInterval() time.Duration {
	if c.StatusRetryInterval == 0 {
		return defaultStatusRetryInterval
	}
	return c.StatusRetryInterval
}
