package executor

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// Defaults used for zero Config fields.
const (
	DefaultSubjectPrefix  = protocol.DefaultSubjectPrefix
	DefaultHTTPAddr       = "127.0.0.1:0"
	DefaultGrace          = 3 * time.Second
	DefaultResendInterval = time.Second
	DefaultRequestTimeout = 2 * time.Second
	DefaultVersion        = "dev"
	// DefaultHeartbeat is used when the master's register reply names no
	// heartbeat interval.
	DefaultHeartbeat = time.Second
	// DefaultShuffleSlots is the number of shuffle transfers served at
	// once when Config.ShuffleSlots is 0.
	DefaultShuffleSlots = 2
	// DefaultShuffleReportInterval is Config.ShuffleReportInterval's.
	DefaultShuffleReportInterval = 100 * time.Millisecond
	// DefaultFilesTokenTTL is how long a task's files token is valid when
	// Config.FilesTokenTTL is 0.
	DefaultFilesTokenTTL = 24 * time.Hour
	// DefaultGCDelay is how long a sandbox is kept after its task ended
	// by default: the files token TTL's default, as the tokens that read
	// sandboxes are valid that long (Config.GCDelay, which follows
	// Config.FilesTokenTTL when 0).
	DefaultGCDelay = DefaultFilesTokenTTL
	// DefaultGCInterval is how often the agent looks at its sandboxes and
	// its disk when Config.GCInterval is 0 (Mesos's disk_watch_interval).
	DefaultGCInterval = time.Minute
	// DefaultGCDiskThreshold is the fraction of the work directory's file
	// system used past which sandboxes go early, when
	// Config.GCDiskThreshold is 0.
	DefaultGCDiskThreshold = 0.9
)

// Config configures an Agent.
type Config struct {
	// NATSURLs are the NATS servers to connect to (the masters' embedded
	// servers, say). Ignored when NATSConn is set.
	NATSURLs []string
	// NATSConn is an existing connection to use instead of dialling
	// NATSURLs. The agent does not close it.
	NATSConn *nats.Conn
	// NATSCA, NATSCert and NATSKey are PEM files for NATS over TLS: the CA
	// that signed the servers' certificates (empty: the system's roots) and
	// the agent's own certificate and key, for servers that verify clients.
	// Setting any of them makes the connection use TLS.
	NATSCA, NATSCert, NATSKey string
	// Principal and Secret are the agent's credential (the masters'
	// agent credentials): the agent connects to NATS as "agent.<principal>"
	// with the secret, and registers, heartbeats and reports on that
	// principal's subjects only. With a client certificate and no
	// principal, the principal the certificate names. Empty: an agent of a
	// cluster that authenticates no agent.
	Principal, Secret string
	// SubjectPrefix starts every NATS subject (default "allot").
	SubjectPrefix string
	// WorkDir holds the agent's checkpoint (agent.json, tasks.journal),
	// the task sandboxes (sandboxes/) and the shims' records (control/).
	// Created if missing, and made mode 0711: the users tasks run as must
	// be able to pass through it, and through every directory above it.
	// One agent process at a time may use it.
	WorkDir string
	// Hostname is reported to the master (default os.Hostname).
	Hostname string
	// Resources are the agent's total resources. Zero means detected (see
	// DetectResources); otherwise they are used as given.
	Resources protocol.Resources
	// Attributes are merged over the detected ones (see DetectAttributes).
	Attributes protocol.Attributes
	// Devices are the agent's GPU models by device index (devices.go);
	// nil means detected (DetectGPUs), an empty list none.
	Devices []string
	// Isolation is how task limits are enforced (default auto).
	Isolation runner.Isolation
	// Shim is the argv prefix that runs the task shim (default
	// {os.Executable(), runner.ShimCommand}).
	Shim []string
	// ShimEnv is added ("KEY=VALUE") to the shims' environment.
	ShimEnv []string
	// HTTPAddr is the listen address of the agent's file server (default
	// 127.0.0.1:0, a free port).
	HTTPAddr string
	// HTTPAdvertiseAddr is the address reported to the master; empty means
	// the listen address, with an unspecified host (0.0.0.0, ::) replaced
	// by Hostname.
	HTTPAdvertiseAddr string
	// FilesToken is the bearer token the file server requires. A random
	// one is generated when empty; Agent.FilesToken returns it.
	FilesToken string
	// FilesSecret keys the framework tokens each task gets in
	// ALLOT_FILES_TOKEN (files.FrameworkToken): with one secret shared by
	// all agents, a task can read its framework's sandboxes on any of them,
	// as the MapReduce shuffle does. Empty means FilesToken, which only this
	// agent knows, so tokens then work on this agent only.
	FilesSecret string
	// FilesTokenTTL is how long the framework token a task gets in
	// ALLOT_FILES_TOKEN is valid, from the task's launch (default 24h): a
	// token that leaks out of a task reads its framework's sandboxes for
	// that long only.
	FilesTokenTTL time.Duration
	// GCDelay is how long a task's sandbox is kept after the task ended
	// (Mesos's --gc_delay); zero means FilesTokenTTL. Its default equals
	// the files token TTL's because a task reads its framework's
	// sandboxes (the shuffle's reducers read the maps') with a token
	// valid that long from its launch: past it, the tasks that ran beside
	// an ended one cannot read its sandbox anyway.
	GCDelay time.Duration
	// GCInterval is how often the agent checks its sandboxes and its disk
	// (default 1m); it also does right after a task ends or a framework
	// is shut down when GCDiskBudget is set or the disk was found short.
	GCInterval time.Duration
	// GCDiskThreshold is the fraction of the work directory's file system
	// used (as df counts it) past which ended sandboxes are removed before
	// their delay (default 0.9; 1 never). GCDiskBudget is the bytes all
	// sandboxes together may take before that happens (0: no budget).
	// Early removal takes, oldest end first and only until back under,
	// the sandboxes of frameworks the agent knows gone (it was told to
	// shut them down): a framework that may still read its sandboxes
	// keeps them until their delay, whatever the disk; the agent then
	// warns and counts it in its metrics. A running task's sandbox is
	// never removed.
	GCDiskThreshold float64
	GCDiskBudget    int64
	// TaskUser is the user tasks run as when their command names none
	// (CommandInfo.User); empty means the agent's own user. Only an agent
	// running as root runs tasks as a user other than its own: each task
	// then runs with its user's uid, primary gid and supplementary groups,
	// in a sandbox that user owns (see executor/runner).
	TaskUser string
	// ShuffleSlots is how many shuffle transfers (file server downloads
	// naming a coflow) the agent serves at once (default 2); the others
	// wait, and are served in the order of the leader's latest coflow
	// priorities (Philae), unranked ones last, each in arrival order.
	ShuffleSlots int
	// ShuffleEgress is the bytes a second the agent's shuffle transfers
	// may send together (0, the default: unlimited). Under it, the port's
	// bytes go to the transfers being served a chunk at a time, the
	// best-ranked by the leader's coflow priorities first (shuffle_pacer.go).
	ShuffleEgress int64
	// ShuffleIngress is the bytes a second the shuffle transfers into this
	// agent's tasks may bring together (0, the default: unlimited). The
	// senders ask this agent for each chunk, and it grants them a chunk at
	// a time, the best-ranked by the leader's coflow priorities first
	// (shuffle_ingress.go).
	ShuffleIngress int64
	// ShuffleReportInterval is the least time between two reports of
	// what the shuffle transfers sent, which go to the leader while they
	// run (Aalo's δ; default 100ms). A completed transfer does not wait
	// for it.
	ShuffleReportInterval time.Duration
	// DefaultGrace is the time between SIGTERM and SIGKILL on a kill when
	// the task sets no KillGracePeriod (default 3s).
	DefaultGrace time.Duration
	// ResendInterval is how often an unacknowledged status update is sent
	// again (default 1s).
	ResendInterval time.Duration
	// RequestTimeout bounds one request attempt to the master (default 2s).
	RequestTimeout time.Duration
	// Version is the agent's software version, reported to the master.
	Version string
	// Logger receives the agent's logs (nil discards them).
	Logger hclog.Logger
}

// DefaultConfig returns a Config with the defaults filled in; WorkDir and
// NATSURLs (or NATSConn) remain to be set.
func DefaultConfig() Config {
	return Config{
		SubjectPrefix:         DefaultSubjectPrefix,
		Isolation:             runner.IsolationAuto,
		HTTPAddr:              DefaultHTTPAddr,
		DefaultGrace:          DefaultGrace,
		ResendInterval:        DefaultResendInterval,
		RequestTimeout:        DefaultRequestTimeout,
		ShuffleSlots:          DefaultShuffleSlots,
		ShuffleReportInterval: DefaultShuffleReportInterval,
		FilesTokenTTL:         DefaultFilesTokenTTL,
		GCDelay:               DefaultGCDelay,
		GCInterval:            DefaultGCInterval,
		GCDiskThreshold:       DefaultGCDiskThreshold,
		Version:               DefaultVersion,
	}
}

// Validate checks the configuration. Zero values that have a default are
// accepted.
func (c Config) Validate() error {
	if c.NATSConn == nil && len(c.NATSURLs) == 0 {
		return fmt.Errorf("%w: NATS URLs or a NATS connection are required", ErrConfig)
	}
	if (c.NATSCert == "") != (c.NATSKey == "") {
		return fmt.Errorf("%w: a NATS client certificate needs its key", ErrConfig)
	}
	if c.Principal != "" && (!protocol.ValidPrincipal(c.Principal) || c.Principal == protocol.AnonymousPrincipal) {
		return fmt.Errorf("%w: principal %q: want 1 to %d letters, digits, '_' or '-'", ErrConfig, c.Principal, protocol.MaxPrincipalLen)
	}
	if c.Secret != "" && c.Principal == "" && c.NATSCert == "" {
		return fmt.Errorf("%w: a secret needs a principal", ErrConfig)
	}
	if c.WorkDir == "" {
		return fmt.Errorf("%w: work dir is required", ErrConfig)
	}
	if err := (protocol.Subjects{Prefix: c.SubjectPrefix}).Validate(); err != nil {
		return fmt.Errorf("%w: subject prefix: %w", ErrConfig, err)
	}
	if len(c.Hostname) > protocol.MaxNameLen {
		return fmt.Errorf("%w: hostname is longer than %d bytes", ErrConfig, protocol.MaxNameLen)
	}
	if !c.Resources.IsEmpty() {
		if err := c.Resources.Validate(); err != nil {
			return fmt.Errorf("%w: resources: %w", ErrConfig, err)
		}
	}
	if c.Isolation != "" && !c.Isolation.Valid() {
		return fmt.Errorf("%w: unknown isolation %q", ErrConfig, c.Isolation)
	}
	if len(c.Shim) > 0 && c.Shim[0] == "" {
		return fmt.Errorf("%w: empty shim command", ErrConfig)
	}
	if c.HTTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
			return fmt.Errorf("%w: http addr %q: %w", ErrConfig, c.HTTPAddr, err)
		}
	}
	if c.HTTPAdvertiseAddr != "" {
		if _, _, err := net.SplitHostPort(c.HTTPAdvertiseAddr); err != nil {
			return fmt.Errorf("%w: http advertise addr %q: %w", ErrConfig, c.HTTPAdvertiseAddr, err)
		}
	}
	if c.ShuffleSlots < 0 || c.ShuffleEgress < 0 || c.ShuffleIngress < 0 {
		return fmt.Errorf("%w: shuffle slots %d, egress %d, ingress %d: negative", ErrConfig, c.ShuffleSlots, c.ShuffleEgress, c.ShuffleIngress)
	}
	for name, d := range map[string]time.Duration{
		"default grace": c.DefaultGrace, "resend interval": c.ResendInterval, "request timeout": c.RequestTimeout,
		"files token ttl": c.FilesTokenTTL, "gc delay": c.GCDelay, "gc interval": c.GCInterval,
		"shuffle report interval": c.ShuffleReportInterval,
	} {
		if d < 0 {
			return fmt.Errorf("%w: %s is negative", ErrConfig, name)
		}
	}
	// Written so that NaN fails too.
	if !(c.GCDiskThreshold >= 0 && c.GCDiskThreshold <= 1) {
		return fmt.Errorf("%w: gc disk threshold %g: want a fraction of the disk in (0, 1]", ErrConfig, c.GCDiskThreshold)
	}
	if c.GCDiskBudget < 0 {
		return fmt.Errorf("%w: gc disk budget %d is negative", ErrConfig, c.GCDiskBudget)
	}
	return nil
}

// withDefaults returns c with its zero fields set, resources and
// attributes detected, and a files token generated if needed.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = d.SubjectPrefix
	}
	if c.Isolation == "" {
		c.Isolation = d.Isolation
	}
	if c.HTTPAddr == "" {
		c.HTTPAddr = d.HTTPAddr
	}
	if c.DefaultGrace == 0 {
		c.DefaultGrace = d.DefaultGrace
	}
	if c.ResendInterval == 0 {
		c.ResendInterval = d.ResendInterval
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.ShuffleSlots == 0 {
		c.ShuffleSlots = d.ShuffleSlots
	}
	if c.ShuffleReportInterval == 0 {
		c.ShuffleReportInterval = d.ShuffleReportInterval
	}
	if c.FilesTokenTTL == 0 {
		c.FilesTokenTTL = d.FilesTokenTTL
	}
	if c.GCDelay == 0 {
		c.GCDelay = c.FilesTokenTTL
	}
	if c.GCInterval == 0 {
		c.GCInterval = d.GCInterval
	}
	if c.GCDiskThreshold == 0 {
		c.GCDiskThreshold = d.GCDiskThreshold
	}
	if _, err := runner.LookupUser(c.TaskUser); err != nil {
		return c, fmt.Errorf("%w: task user: %w", ErrConfig, err)
	}
	if c.Version == "" {
		c.Version = d.Version
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Hostname == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return c, fmt.Errorf("%w: hostname: %v", ErrConfig, err)
		}
		c.Hostname = h
	}
	if len(c.Shim) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("%w: shim: %w", ErrConfig, err)
		}
		c.Shim = []string{exe, runner.ShimCommand}
	}
	if c.Principal == "" && c.NATSCert != "" {
		// A cluster on mutual TLS takes the agent's identity from its
		// certificate: the subjects it uses must name the same one.
		p, err := protocol.CertPrincipal(c.NATSCert, protocol.KindAgent)
		if err != nil {
			return c, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c.Principal = p
	}
	if c.FilesToken == "" {
		c.FilesToken = protocol.NewID("")
	}
	if c.FilesSecret == "" {
		c.FilesSecret = c.FilesToken
	}
	return c, nil
}
