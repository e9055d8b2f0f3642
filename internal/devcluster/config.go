package devcluster

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// Errors of this package.
var (
	// ErrConfig: an invalid Config.
	ErrConfig = errors.New("devcluster: invalid config")
	// ErrPortInUse: a port of the layout is taken by another process.
	ErrPortInUse = errors.New("devcluster: port in use")
	// ErrLocked: another cluster runs on the data directory.
	ErrLocked = errors.New("devcluster: data dir in use")
	// ErrLayout: dev.json cannot be read or does not describe a cluster.
	ErrLayout = errors.New("devcluster: bad layout")
	// ErrNotReady: the cluster did not come up within Config.StartTimeout.
	ErrNotReady = errors.New("devcluster: not ready")
)

// Defaults of Config.
const (
	DefaultMasters  = 3
	DefaultAgents   = 3
	DefaultHost     = "127.0.0.1"
	DefaultNATSPort = 4222
	// DefaultHTTPPort is the first master's operator API; master i listens
	// on DefaultHTTPPort+i-1 and agent i's file server on
	// DefaultHTTPPort+AgentHTTPOffset+i-1.
	DefaultHTTPPort = 5050
	// DefaultRaftPort is the first master's Raft port; master i uses
	// DefaultRaftPort+i-1.
	DefaultRaftPort = 7000
	// AgentHTTPOffset separates the agents' HTTP ports from the masters'.
	AgentHTTPOffset = 10
	// DefaultStartTimeout bounds Start.
	DefaultStartTimeout = 60 * time.Second
	// MaxAgents bounds Config.Agents.
	MaxAgents = 64
)

// Config configures a dev cluster. Masters, Agents, the ports and
// AgentResources shape the layout of a new data directory only; a
// directory that already holds a cluster keeps its saved layout.
type Config struct {
	// DataDir holds everything (see the package comment). Required;
	// created if missing.
	DataDir string
	// Masters is 1 or 3.
	Masters int
	// Agents is how many agents to run, 1 to MaxAgents.
	Agents int
	// AgentResources are each agent's resources. Empty means this
	// machine's (executor.DetectResources) divided among the agents. An
	// agent whose resources name no ports gets its own slice of
	// 31000-32000, so tasks on different agents never share a port.
	AgentResources protocol.Resources
	// Host is the address everything listens on (default 127.0.0.1).
	Host string
	// NATSPort is the NATS client port; 0 picks a free port.
	NATSPort int
	// HTTPPort is the first master's HTTP port (see DefaultHTTPPort); 0
	// picks free ports for every master and agent.
	HTTPPort int
	// RaftPort is the first master's Raft port; 0 picks free ports.
	RaftPort int
	// Isolation is how agents enforce task limits (default auto).
	Isolation runner.Isolation
	// AgentShim and AgentShimEnv override how agents start the task shim
	// (executor.Config.Shim and ShimEnv); by default this executable's
	// task-shim subcommand.
	AgentShim    []string
	AgentShimEnv []string
	// CoflowScheduler is the masters' coflow scheduler (master.Config's;
	// empty: its default). AgentShuffleSlots, AgentShuffleEgress and
	// AgentShuffleIngress are the agents' (executor.Config's; 0: theirs).
	CoflowScheduler     string
	AgentShuffleSlots   int
	AgentShuffleEgress  int64
	AgentShuffleIngress int64
	// StartTimeout bounds Start: masters up, a leader elected, every
	// agent registered.
	StartTimeout time.Duration
	// Logger receives every component's logs (nil discards them).
	Logger hclog.Logger
}

// DefaultConfig returns the defaults; DataDir remains to be set.
func DefaultConfig() Config {
	return Config{
		Masters:      DefaultMasters,
		Agents:       DefaultAgents,
		Host:         DefaultHost,
		NATSPort:     DefaultNATSPort,
		HTTPPort:     DefaultHTTPPort,
		RaftPort:     DefaultRaftPort,
		Isolation:    runner.IsolationAuto,
		StartTimeout: DefaultStartTimeout,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return fmt.Errorf("%w: data dir is required", ErrConfig)
	}
	if c.Masters != 1 && c.Masters != 3 {
		return fmt.Errorf("%w: %d masters: want 1 or 3", ErrConfig, c.Masters)
	}
	if c.Agents < 1 || c.Agents > MaxAgents {
		return fmt.Errorf("%w: %d agents: want 1 to %d", ErrConfig, c.Agents, MaxAgents)
	}
	if !c.AgentResources.IsEmpty() {
		if err := c.AgentResources.Validate(); err != nil {
			return fmt.Errorf("%w: agent resources: %w", ErrConfig, err)
		}
	}
	if c.Host == "" {
		return fmt.Errorf("%w: host is required", ErrConfig)
	}
	// The highest port each base implies must exist.
	for name, p := range map[string][2]int{
		"nats port": {c.NATSPort, c.NATSPort},
		"http port": {c.HTTPPort, c.HTTPPort + AgentHTTPOffset + c.Agents - 1},
		"raft port": {c.RaftPort, c.RaftPort + c.Masters - 1},
	} {
		if p[0] < 0 || p[0] > 0 && p[1] > 65535 {
			return fmt.Errorf("%w: %s %d out of range", ErrConfig, name, p[0])
		}
	}
	if c.Isolation != "" && !c.Isolation.Valid() {
		return fmt.Errorf("%w: unknown isolation %q", ErrConfig, c.Isolation)
	}
	if c.StartTimeout < 0 {
		return fmt.Errorf("%w: negative start timeout", ErrConfig)
	}
	if c.AgentShuffleSlots < 0 || c.AgentShuffleEgress < 0 || c.AgentShuffleIngress < 0 {
		return fmt.Errorf("%w: negative agent shuffle slots, egress or ingress", ErrConfig)
	}
	return nil
}
