package coflowsim

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/allot-project/allot/coflow"
)

// ErrBadSimulation reports a coflow simulation that cannot run as configured.
var ErrBadSimulation = errors.New("bad coflow simulation")

// Config configures one run of Run. Start from
// DefaultConfig.
type Config struct {
	// Policy names the scheduler: philae (ordering by Coflow.Policy),
	// philae-A .. philae-D (philae with that ordering), aalo, aalo-oracle,
	// sebf, scf, fifo, fair (max-min) or fair-split (equal split).
	Policy string
	// Coflow is the coordinator's configuration. Its Scheduler and Ports
	// are set from Policy and the trace; Capacity is every port side's
	// bandwidth in bytes per second, for the simulated fabric too, and
	// Slot is δ, the slot length and aalo's report interval.
	Coflow coflow.Config
	// Quantum, when positive, mimics slotted simulators such as the
	// authors': the coordinator hears of completions and arrivals, and rates
	// change, only at multiples of Quantum. A flow that finishes inside a
	// quantum leaves its ports idle until the next one. Zero (the default)
	// is event-driven with exact completion times.
	Quantum time.Duration
	// OrderOnly drops the decisions' rate caps (sebf's and fifo's MADD):
	// flows go in the decision's order, each at what its ports have left,
	// as allot's agents serve a decision (they pace by order, not rate).
	OrderOnly bool
}

// DefaultConfig is Philae with the paper's defaults (docs/coflow.md):
// 1 Gbps ports, δ = 8 ms, event-driven.
func DefaultConfig() Config {
	return Config{Policy: string(coflow.SchedulerPhilae), Coflow: coflow.DefaultConfig(1)}
}

// Policies lists the policy names Run accepts.
func Policies() []string {
	var out []string
	for _, s := range coflow.Schedulers() {
		out = append(out, string(s))
		if s == coflow.SchedulerPhilae {
			for _, p := range []coflow.Policy{coflow.PolicyA, coflow.PolicyB, coflow.PolicyC, coflow.PolicyD} {
				out = append(out, string(s)+"-"+string(p))
			}
		}
	}
	return out
}

// coordinatorConfig resolves the policy name onto the coordinator's
// configuration for a fabric of the given ports.
func (c Config) coordinatorConfig(ports int) (coflow.Config, error) {
	cfg := c.Coflow
	cfg.Ports = ports
	name := c.Policy
	if rest, ok := strings.CutPrefix(name, string(coflow.SchedulerPhilae)+"-"); ok {
		name = string(coflow.SchedulerPhilae)
		cfg.Policy = coflow.Policy(rest)
	}
	s, err := coflow.ParseScheduler(name)
	if err != nil {
		return cfg, fmt.Errorf("%w: policy %q (want one of %s)", ErrBadSimulation, c.Policy,
			strings.Join(Policies(), ", "))
	}
	cfg.Scheduler = s
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrBadSimulation, err)
	}
	if c.Quantum < 0 {
		return cfg, fmt.Errorf("%w: quantum %v", ErrBadSimulation, c.Quantum)
	}
	return cfg, nil
}
