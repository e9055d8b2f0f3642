package coflowsim

import (
	"fmt"
	"math"

	"github.com/allot-project/allot/sim/internal/stats"
)

// Result is one run: every coflow's completion time and the
// coordinator's load.
type Result struct {
	Policy string `json:"policy"`
	// Coflows by trace id.
	Coflows map[string]Outcome `json:"coflows"`
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
	Load       Load               `json:"load"`
}

// Outcome is one coflow's result.
type Outcome struct {
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

// Load is the coordinator's load, counted per interval of δ
// (docs/coflow.md). Only busy intervals count: those in which some coflow had an
// unfinished flow.
type Load struct {
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

// Run replays the trace under cfg on a non-blocking fabric of
// tr.Ports ports.
func Run(tr *Trace, cfg Config) (Result, error) {
	if tr == nil || tr.Ports <= 0 {
		return Result{}, fmt.Errorf("%w: empty trace", ErrBadSimulation)
	}
	ccfg, err := cfg.coordinatorConfig(tr.Ports)
	if err != nil {
		return Result{}, err
	}
	s, err := newEngine(tr, ccfg, cfg)
	if err != nil {
		return Result{}, err
	}
	if err := s.run(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", cfg.Policy, err)
	}
	return s.result(), nil
}

func (s *engine) result() Result {
	res := Result{Policy: s.policy, Coflows: make(map[string]Outcome, len(s.coflows))}
	var ccts, errs []float64
	for _, c := range s.coflows {
		cct := (c.finish - c.arrival) * 1e3
		o := Outcome{CCTms: cct, ArrivalMs: c.tc.ArrivalMs, Flows: len(c.tc.Flows), Bytes: c.tc.Bytes(),
			EstimatedBytes: c.est}
		res.Coflows[c.tc.ID] = o
		res.Order = append(res.Order, c.tc.ID)
		ccts = append(ccts, cct)
		res.MakespanMs = max(res.MakespanMs, c.finish*1e3)
		if c.est > 0 {
			errs = append(errs, math.Abs(c.est-float64(o.Bytes))/float64(o.Bytes))
		}
	}
	res.AvgCCTms = stats.Mean(ccts)
	res.P50CCTms = stats.Percentile(ccts, 0.5)
	res.P90CCTms = stats.Percentile(ccts, 0.9)
	res.P99CCTms = stats.Percentile(ccts, 0.99)
	if len(errs) > 0 {
		m := stats.Mean(errs)
		v := 0.0
		for _, e := range errs {
			v += (e - m) * (e - m)
		}
		res.Estimation = &EstimationSummary{Coflows: len(errs), MeanError: m, StdError: math.Sqrt(v / float64(len(errs)))}
	}
	res.Load = s.load.summary(s.co.Stats().Recomputes)
	return res
}
