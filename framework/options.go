package framework

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Defaults for options left unset.
const (
	// DefaultName is the framework name when WithName is not given.
	DefaultName = "framework"
	// DefaultRole is the role a framework joins when WithRole is not given.
	DefaultRole = "default"
	// DefaultRequestTimeout bounds one attempt of one request.
	DefaultRequestTimeout = 2 * time.Second
)

// Option configures a Driver.
type Option func(*config) error

type config struct {
	urls            []string
	nc              *nats.Conn
	name            string
	role            string
	principal       string
	secret          string
	user            string
	failoverTimeout time.Duration
	frameworkID     protocol.FrameworkID
	capabilities    []string
	weight          float64
	prefix          string
	logger          hclog.Logger
	requestTimeout  time.Duration
	manualAcks      bool
	suppressed      bool
	// NATS over TLS (WithNATSTLS).
	natsCA, natsCert, natsKey string
}

func defaultConfig() config {
	return config{
		name:           DefaultName,
		role:           DefaultRole,
		prefix:         protocol.DefaultSubjectPrefix,
		logger:         hclog.NewNullLogger(),
		requestTimeout: DefaultRequestTimeout,
	}
}

// WithNATSURLs connects to any of these NATS servers (the masters' embedded
// servers, or an external cluster); the connection reconnects forever.
// The default is nats.DefaultURL.
func WithNATSURLs(urls ...string) Option {
	return func(c *config) error {
		if len(urls) == 0 {
			return fmt.Errorf("%w: no NATS URLs", ErrInvalidSpec)
		}
		c.urls = slices.Clone(urls)
		return nil
	}
}

// WithNATSConn uses an existing connection. The driver does not close it,
// and does not replace its handlers; it watches its status to notice
// disconnects.
func WithNATSConn(nc *nats.Conn) Option {
	return func(c *config) error {
		if nc == nil {
			return fmt.Errorf("%w: nil NATS connection", ErrInvalidSpec)
		}
		c.nc = nc
		return nil
	}
}

// WithName sets the framework's name (default DefaultName).
func WithName(name string) Option {
	return func(c *config) error { c.name = name; return nil }
}

// WithRole sets the role path the framework joins, e.g. "eng/prod"
// (default DefaultRole).
func WithRole(role string) Option {
	return func(c *config) error {
		if !protocol.ValidRole(role) {
			return fmt.Errorf("%w: role %q", ErrInvalidSpec, role)
		}
		c.role = role
		return nil
	}
}

// WithPrincipal sets the principal the framework authenticates as: 1 to
// 64 letters, digits, '_' or '-'. A framework that fails over must keep its
// principal. With WithNATSTLS, the principal the client certificate names
// is used when none is set.
func WithPrincipal(principal string) Option {
	return func(c *config) error {
		if !protocol.ValidPrincipal(principal) {
			return fmt.Errorf("%w: principal %q: want 1 to %d letters, digits, '_' or '-'",
				ErrInvalidSpec, principal, protocol.MaxPrincipalLen)
		}
		c.principal = principal
		return nil
	}
}

// WithUser names the Unix user the framework's tasks run as when a task
// names none (protocol.CommandInfo.User); the default is the agents' own
// default task user. The masters' run-as ACLs say which users a principal
// may name.
func WithUser(user string) Option {
	return func(c *config) error {
		if err := (protocol.SubscribeRequest{Name: "x", Role: "x", User: user}).Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
		c.user = user
		return nil
	}
}

// WithSecret sets the principal's secret: the driver connects to NATS as
// the principal ("framework.<principal>") with it, for clusters that
// authenticate their connections (`allot master --credentials`), which
// refuse a connection without a valid credential. It needs WithPrincipal.
func WithSecret(secret string) Option {
	return func(c *config) error {
		if len(secret) > protocol.MaxNameLen {
			return fmt.Errorf("%w: secret longer than %d bytes", ErrInvalidSpec, protocol.MaxNameLen)
		}
		c.secret = secret
		return nil
	}
}

// WithNATSTLS connects to NATS over TLS: ca is the PEM file of the CA that
// signed the servers' certificates (empty: the system's roots), cert and
// key the framework's own certificate, for servers that verify clients
// (both empty when they do not).
func WithNATSTLS(ca, cert, key string) Option {
	return func(c *config) error {
		if (cert == "") != (key == "") {
			return fmt.Errorf("%w: a NATS client certificate needs its key", ErrInvalidSpec)
		}
		c.natsCA, c.natsCert, c.natsKey = ca, cert, key
		return nil
	}
}

// Environment variables CredentialsFromEnv reads.
const (
	EnvPrincipal = "ALLOT_PRINCIPAL"
	EnvSecret    = "ALLOT_SECRET"
	EnvNATSCA    = "ALLOT_NATS_CA"
	EnvNATSCert  = "ALLOT_NATS_CERT"
	EnvNATSKey   = "ALLOT_NATS_KEY"
)

// CredentialsFromEnv returns WithPrincipal and WithSecret for $ALLOT_PRINCIPAL
// and $ALLOT_SECRET, and WithNATSTLS for $ALLOT_NATS_CA, $ALLOT_NATS_CERT
// and $ALLOT_NATS_KEY (nothing for variables that are unset or empty), the
// way the example frameworks pick up their credentials.
func CredentialsFromEnv() []Option {
	var out []Option
	if p := os.Getenv(EnvPrincipal); p != "" {
		out = append(out, WithPrincipal(p))
	}
	if s := os.Getenv(EnvSecret); s != "" {
		out = append(out, WithSecret(s))
	}
	ca, cert, key := os.Getenv(EnvNATSCA), os.Getenv(EnvNATSCert), os.Getenv(EnvNATSKey)
	if ca != "" || cert != "" || key != "" {
		out = append(out, WithNATSTLS(ca, cert, key))
	}
	return out
}

// WithFailoverTimeout sets how long the master keeps the framework and its
// tasks after the scheduler goes away. The default, 0, kills its tasks as
// soon as the master notices.
func WithFailoverTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative failover timeout", ErrInvalidSpec)
		}
		c.failoverTimeout = d
		return nil
	}
}

// WithFrameworkID resumes an existing framework (scheduler failover): the
// driver subscribes with this ID, takes over its tasks and reconciles them.
func WithFrameworkID(id protocol.FrameworkID) Option {
	return func(c *config) error {
		if !protocol.ValidID(string(id)) {
			return fmt.Errorf("%w: framework id %q", ErrInvalidSpec, id)
		}
		c.frameworkID = id
		return nil
	}
}

// WithCapabilities declares framework capabilities (protocol.CapGang,
// protocol.CapPartitionAware, ...).
func WithCapabilities(caps ...string) Option {
	return func(c *config) error { c.capabilities = append(c.capabilities, caps...); return nil }
}

// WithoutRevocable subscribes with protocol.CapNoRevocable: the master
// never offers the framework revocable resources (leftover offers,
// protocol.Offer.Revocable), whatever demand it declares, so none of its
// tasks can be revoked. Its tasks may still be preempted for other roles'
// guarantees or fair shares, unless launched non-preemptible
// (TaskBuilder.NonPreemptible).
func WithoutRevocable() Option {
	return func(c *config) error {
		if !slices.Contains(c.capabilities, protocol.CapNoRevocable) {
			c.capabilities = append(c.capabilities, protocol.CapNoRevocable)
		}
		return nil
	}
}

// WithWeight sets the framework's weight among its role's frameworks
// (default 1).
func WithWeight(w float64) Option {
	return func(c *config) error {
		if !(w > 0) {
			return fmt.Errorf("%w: weight %v", ErrInvalidSpec, w)
		}
		c.weight = w
		return nil
	}
}

// WithSubjectPrefix sets the cluster's NATS subject prefix (default
// "allot").
func WithSubjectPrefix(prefix string) Option {
	return func(c *config) error {
		if err := (protocol.Subjects{Prefix: prefix}).Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
		c.prefix = prefix
		return nil
	}
}

// WithLogger sets the logger; the driver logs under the name "framework".
// The default discards logs.
func WithLogger(l hclog.Logger) Option {
	return func(c *config) error {
		if l != nil {
			c.logger = l
		}
		return nil
	}
}

// WithRequestTimeout bounds one attempt of one request to the leader
// (default DefaultRequestTimeout). Idempotent requests are attempted again
// until their context ends.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("%w: request timeout %s", ErrInvalidSpec, d)
		}
		c.requestTimeout = d
		return nil
	}
}

// WithManualAcks turns automatic acknowledgements off: the scheduler calls
// Driver.Acknowledge for every status update that carries a UUID. By
// default the driver acknowledges each update once StatusUpdate returns.
// A task's updates come one at a time, in order: the next is sent only
// once the one before is acknowledged (as with Mesos).
func WithManualAcks() Option {
	return func(c *config) error { c.manualAcks = true; return nil }
}

// WithSuppressed subscribes without wanting offers; Revive (or a demand
// declaration followed by Revive) starts them.
func WithSuppressed() Option {
	return func(c *config) error { c.suppressed = true; return nil }
}
