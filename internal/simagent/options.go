package simagent

import (
	"strconv"
	"time"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// Defaults for Options fields left zero, and the heartbeat interval used
// when the master's register reply names none.
const (
	defaultResendInterval  = 100 * time.Millisecond
	defaultRequestTimeout  = time.Second
	defaultRegisterTimeout = 10 * time.Second
	defaultVersion         = "simagent"
	defaultHeartbeat       = 100 * time.Millisecond
)

// DefaultResources are an agent's resources unless set: 4 CPUs and 4 GiB.
func DefaultResources() protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: 4000, protocol.ResMem: 4096})
}

// Options configures an Agent.
type Options struct {
	// Hostname defaults to "agent-<n>".
	Hostname string
	// Resources default to DefaultResources.
	Resources  protocol.Resources
	Attributes protocol.Attributes
	// Behaviour applies to tasks without a LabelBehaviour label (default
	// Finish(50ms)).
	Behaviour Behaviour
	// Held starts the agent holding: tasks reach RUNNING but their
	// behaviour waits for Release.
	Held bool
	// ResendInterval is how long an unacknowledged status update waits
	// before it is sent again (default 100ms).
	ResendInterval time.Duration
	// RequestTimeout bounds one request attempt (default 1s).
	RequestTimeout time.Duration
	// StallCheck is how long the agent's NATS server may take to answer
	// a ping after a heartbeat went unanswered before the agent gives it
	// up for another (default natsclient.StallCheck).
	StallCheck time.Duration
	// RegisterTimeout bounds registering, retries included (default
	// 10s).
	RegisterTimeout time.Duration
	// DropLaunches makes the agent ignore its first DropLaunches launch
	// commands, as if they were lost on the way.
	DropLaunches int
	// Principal is the agent credential's principal ("" where the cluster
	// does not authenticate): the agent listens on that principal's
	// command subjects (protocol.Subjects.AgentCmdAll) and calls on its API
	// subjects.
	Principal string
	// Version is reported at registration (default "simagent").
	Version string
	// OnHeartbeat, if set, is called after each heartbeat with its
	// outcome (the load generator times agents' outages by it).
	OnHeartbeat func(err error)
}

func (o *Options) setDefaults(n int) {
	if o.Hostname == "" {
		o.Hostname = "agent-" + strconv.Itoa(n)
	}
	if o.Resources.IsEmpty() {
		o.Resources = DefaultResources()
	}
	if o.Behaviour.Kind == "" {
		o.Behaviour = Finish(50 * time.Millisecond)
	}
	if o.ResendInterval == 0 {
		o.ResendInterval = defaultResendInterval
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	if o.StallCheck == 0 {
		o.StallCheck = natsclient.StallCheck
	}
	if o.RegisterTimeout == 0 {
		o.RegisterTimeout = defaultRegisterTimeout
	}
	if o.Version == "" {
		o.Version = defaultVersion
	}
}
