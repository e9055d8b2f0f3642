package sim

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/allot-project/allot/coflow"
)

// ErrBadCoflowSim reports a coflow simulation that cannot run as configured.
var ErrBadCoflowSim = errors.New("bad coflow simulation")

// CoflowSimConfig configures one run of RunCoflowSim. Start from
// DefaultCoflowSimConfig.
type CoflowSimConfig struct {
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
}

// DefaultCoflowSimConfig is Philae with the paper's defaults (docs/coflow.md):
// 1 Gbps ports, δ = 8 ms, event-driven.
func DefaultCoflowSimConfig() CoflowSimConfig {
	return CoflowSimConfig{Policy: string(coflow.SchedulerPhilae), Coflow: coflow.DefaultConfig(1)}
}

// CoflowPolicies lists the policy names RunCoflowSim accepts.
func CoflowPolicies() []string {
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
func (c CoflowSimConfig) coordinatorConfig(ports int) (coflow.Config, error) {
	cfg := c.Coflow
	cfg.Ports = ports
	name := c.Policy
	if rest, ok := strings.CutPrefix(name, string(coflow.SchedulerPhilae)+"-"); ok {
		name = string(coflow.SchedulerPhilae)
		cfg.Policy = coflow.Policy(rest)
	}
	s, err := coflow.ParseScheduler(name)
	if err != nil {
		return cfg, fmt.Errorf("%w: policy %q (want one of %s)", ErrBadCoflowSim, c.Policy,
			strings.Join(CoflowPolicies(), ", "))
	}
	cfg.Scheduler = s
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %w", ErrBadCoflowSim, err)
	}
	if c.Quantum < 0 {
		return cfg, fmt.Errorf("%w: quantum %v", ErrBadCoflowSim, c.Quantum)
	}
	return cfg, nil
}

// CoflowResult is one run: every coflow's completion time and the
// coordinator's load.
type CoflowResult struct {
	Policy string `json:"policy"`
	// Coflows by trace id.
	Coflows map[string]CoflowOutcome `json:"coflows"`
	// Order lists the coflow ids in arrival order.
	Order    []string `json:"-"`
	AvgCCTms float64  `json:"avg_cct_ms"`
	P50CCTms float64  `json:"p50_cct_ms"`
	P90CCTms float64  `json:"p90_cct_ms"`
	P99CCTms float64  `json:"p99_cct_ms"`
	// MakespanMs is when the last flow finished.
	MakespanMs float64 `json:"makespan_ms"`
	// Estimation summarises philae's size estimates (nil for the others).
	Estimation *EstimationSummary `json:"estimation,omitempty"`
	Load       CoflowLoad         `json:"load"`
}

// CoflowOutcome is one coflow's result.
type CoflowOutcome struct {
	CCTms     float64 `json:"cct_ms"`
	ArrivalMs int64   `json:"arrival_ms"`
	Flows     int     `json:"flows"`
	Bytes     int64   `json:"bytes"`
	// EstimatedBytes is philae's Ŝ = l̂·N for a piloted coflow, else 0.
	EstimatedBytes float64 `json:"estimated_bytes,omitempty"`
}

// EstimationSummary is the relative error |Ŝ − S| / S of philae's size
// estimates over the piloted coflows (docs/coflow.md).
type EstimationSummary struct {
	Coflows   int     `json:"coflows"`
	MeanError float64 `json:"mean_error"`
	StdError  float64 `json:"std_error"`
}

// CoflowLoad is the coordinator's load, counted per interval of δ
// (docs/coflow.md). Only busy intervals count: those in which some coflow had an
// unfinished flow.
type CoflowLoad struct {
	IntervalMs    float64 `json:"interval_ms"`
	BusyIntervals int     `json:"busy_intervals"`
	// AgentsPerInterval is the mean number of agents (sending ports) that
	// sent the coordinator a message in an interval: a flow completion, or
	// a byte report with new bytes (aalo every δ; sebf, fifo and scf before
	// each recomputation).
	AgentsPerInterval float64 `json:"agents_per_interval"`
	// PushIntervals are the busy intervals in which a decision with
	// different grants had to be pushed; RecomputeIntervals those with at
	// least one recomputation (a new Epoch).
	PushIntervals      int     `json:"push_intervals"`
	PushFraction       float64 `json:"push_fraction"`
	RecomputeIntervals int     `json:"recompute_intervals"`
	// Recomputes counts decisions computed; Pushes those whose grants
	// changed; Completions and Reports the agent messages.
	Recomputes  int `json:"recomputes"`
	Pushes      int `json:"pushes"`
	Completions int `json:"completions"`
	Reports     int `json:"reports"`
	// RateRuns counts rate computations (one per batch of events).
	RateRuns int `json:"rate_runs"`
}

// RunCoflowSim replays the trace under cfg on a non-blocking fabric of
// tr.Ports ports.
func RunCoflowSim(tr *CoflowTrace, cfg CoflowSimConfig) (CoflowResult, error) {
	if tr == nil || tr.Ports <= 0 {
		return CoflowResult{}, fmt.Errorf("%w: empty trace", ErrBadCoflowSim)
	}
	ccfg, err := cfg.coordinatorConfig(tr.Ports)
	if err != nil {
		return CoflowResult{}, err
	}
	s, err := newCoflowSim(tr, ccfg, cfg)
	if err != nil {
		return CoflowResult{}, err
	}
	if err := s.run(); err != nil {
		return CoflowResult{}, fmt.Errorf("%s: %w", cfg.Policy, err)
	}
	return s.result(), nil
}
