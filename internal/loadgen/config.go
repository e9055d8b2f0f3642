package loadgen

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"
)

// ErrConfig reports a Config that cannot run.
var ErrConfig = errors.New("loadgen: invalid config")

// Config is one load run.
type Config struct {
	// Bin is the allot binary the masters run.
	Bin string
	// Dir holds the masters' data and logs; empty means a temporary
	// directory, removed afterwards.
	Dir string
	// Masters, Agents and Frameworks are how many of each run.
	Masters, Agents, Frameworks int
	// AgentCPUs and AgentMemMiB are each simulated agent's resources.
	AgentCPUs, AgentMemMiB int64
	// Tasks is how many tasks the frameworks keep running together (1 CPU
	// and 1 GiB each); TaskDuration is how long one runs on average.
	Tasks        int
	TaskDuration time.Duration
	// Warmup bounds the wait for the frameworks to reach Tasks before the
	// measured window starts.
	Warmup time.Duration
	// Duration is the measured window.
	Duration time.Duration
	// Kills is how many times the leader is killed (SIGKILL) during the
	// window, evenly spread; each killed master is started again.
	Kills int
	// Drain bounds the wait, after the window, for every task launched to
	// end; zero means twice TaskDuration plus a minute.
	Drain time.Duration
	// CatchUp, after the window, kills a follower, empties its data
	// directory and starts it again, timing its catch-up from the leader.
	CatchUp bool
	// MasterArgs are added to every master's command line (the shipped
	// defaults otherwise).
	MasterArgs []string
	// Connect is how many agents connect and register at once.
	Connect int
	// AgentLogLevel is the simulated agents' log level (their process
	// writes its logs to stderr); empty means warn.
	AgentLogLevel string
	Logger        hclog.Logger
	// Progress, when set, receives a line per step.
	Progress io.Writer
}

// DefaultConfig is the run the acceptance figures in docs/benchmarks.md
// take: 10,000 agents of 4 CPUs, 10 frameworks keeping 20,000 tasks of
// about two minutes running, ten measured minutes, two leader kills.
func DefaultConfig() Config {
	return Config{Masters: 3, Agents: 10000, Frameworks: 10, AgentCPUs: 4, AgentMemMiB: 8192,
		Tasks: 20000, TaskDuration: 2 * time.Minute, Warmup: 3 * time.Minute, Duration: 10 * time.Minute,
		Kills: 2, Connect: 64}
}

// Validate checks the config.
func (c Config) Validate() error {
	switch {
	case c.Bin == "":
		return fmt.Errorf("%w: no allot binary to run the masters", ErrConfig)
	case c.Masters < 1 || c.Agents < 1 || c.Frameworks < 1 || c.Connect < 1:
		return fmt.Errorf("%w: masters, agents, frameworks and connect must be at least 1", ErrConfig)
	case c.AgentCPUs < 1 || c.AgentMemMiB < 1024:
		return fmt.Errorf("%w: an agent needs at least 1 CPU and 1 GiB (one task)", ErrConfig)
	case c.Tasks < 0 || c.TaskDuration <= 0 || c.Duration <= 0 || c.Warmup < 0 || c.Kills < 0 || c.Drain < 0:
		return fmt.Errorf("%w: tasks, durations and kills must not be negative", ErrConfig)
	case c.Kills > 0 && c.Masters < 3:
		return fmt.Errorf("%w: leader kills need three masters or more", ErrConfig)
	}
	return nil
}
