package coflowsim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/sim/internal/parallel"
	"github.com/allot-project/allot/sim/internal/stats"
)

// Comparison is several policies run on one trace, with factors
// against the first.
type Comparison struct {
	// Invert says the factors are each policy's speedup over the first;
	// otherwise they are the first's speedup over each (docs/coflow.md).
	Invert bool `json:"invert"`
	// Sweep and Value name the knob setting of one step of a sweep ("" for
	// none).
	Sweep string     `json:"sweep,omitempty"`
	Value float64    `json:"value,omitempty"`
	Rows  []Row      `json:"rows"`
	Trace TraceShape `json:"trace"`
	Runs  []Result   `json:"-"`
}

// TraceShape describes the trace a comparison ran on.
type TraceShape struct {
	Ports   int   `json:"ports"`
	Coflows int   `json:"coflows"`
	Flows   int   `json:"flows"`
	Bytes   int64 `json:"bytes"`
}

// Row is one policy of a comparison.
type Row struct {
	Policy   string  `json:"policy"`
	AvgCCTms float64 `json:"avg_cct_ms"`
	P50CCTms float64 `json:"p50_cct_ms"`
	P90CCTms float64 `json:"p90_cct_ms"`
	P99CCTms float64 `json:"p99_cct_ms"`
	// AvgFactor is a ratio of average CCTs: this policy's over the first's
	// (the first's speedup), or the inverse with Invert. P50Factor and
	// P90Factor are percentiles of the same ratio taken coflow by coflow.
	AvgFactor float64 `json:"avg_factor"`
	P50Factor float64 `json:"p50_factor"`
	P90Factor float64 `json:"p90_factor"`
	// Estimation is philae's size-estimation error, if any.
	Estimation *EstimationSummary `json:"estimation,omitempty"`
	Load       Load               `json:"load"`
}

// Shape summarises a trace.
func (tr *Trace) Shape() TraceShape {
	s := TraceShape{Ports: tr.Ports, Coflows: len(tr.Coflows)}
	for i := range tr.Coflows {
		s.Flows += len(tr.Coflows[i].Flows)
		s.Bytes += tr.Coflows[i].Bytes()
	}
	return s
}

// Compare runs every policy on the trace with base's knobs, as many
// at once as there are processors, and sets factors against the first.
func Compare(tr *Trace, base Config, policies []string, invert bool) (Comparison, error) {
	if len(policies) == 0 {
		return Comparison{}, fmt.Errorf("%w: no policies to compare", ErrBadSimulation)
	}
	cfgs := make([]Config, len(policies))
	for i, p := range policies {
		cfgs[i] = base
		cfgs[i].Policy = p
		if _, err := cfgs[i].coordinatorConfig(tr.Ports); err != nil {
			return Comparison{}, err
		}
	}
	runs, err := runAll(tr, cfgs)
	if err != nil {
		return Comparison{}, err
	}
	return compareRuns(tr, runs, invert), nil
}

func compareRuns(tr *Trace, runs []Result, invert bool) Comparison {
	c := Comparison{Invert: invert, Trace: tr.Shape(), Runs: runs}
	first := runs[0]
	for _, r := range runs {
		row := Row{Policy: r.Policy, AvgCCTms: r.AvgCCTms, P50CCTms: r.P50CCTms, P90CCTms: r.P90CCTms,
			P99CCTms: r.P99CCTms, Estimation: r.Estimation, Load: r.Load}
		num, den := r, first
		if invert {
			num, den = first, r
		}
		row.AvgFactor = stats.Ratio(num.AvgCCTms, den.AvgCCTms)
		var per []float64
		for _, id := range first.Order {
			if d := den.Coflows[id].CCTms; d > 0 {
				per = append(per, num.Coflows[id].CCTms/d)
			}
		}
		row.P50Factor = stats.Percentile(per, 0.5)
		row.P90Factor = stats.Percentile(per, 0.9)
		c.Rows = append(c.Rows, row)
	}
	return c
}

// runAll runs the configurations in parallel; results keep their
// order.
func runAll(tr *Trace, cfgs []Config) ([]Result, error) {
	out := make([]Result, len(cfgs))
	errs := make([]error, len(cfgs))
	// Longest runs first, so that the last one to start is a short one.
	order := make([]int, len(cfgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(runCost(cfgs[b]), runCost(cfgs[a])) })
	parallel.Each(len(order), func(k int) {
		i := order[k]
		out[i], errs[i] = Run(tr, cfgs[i])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runCost ranks policies by how long a run takes (CPU seconds on FB2010:
// fifo 20, fair 15, sebf 13, aalo 8, philae and scf 5, fair-split 3): sebf
// and fifo re-share capacity after every completion over tens of thousands
// of flows in flight; fair refills max-min rates over thousands of links;
// aalo handles a byte report every δ.
func runCost(cfg Config) int {
	switch {
	case cfg.Policy == string(coflow.SchedulerFIFO):
		return 5
	case cfg.Policy == string(coflow.SchedulerFair):
		return 4
	case cfg.Policy == string(coflow.SchedulerSEBF):
		return 3
	case strings.HasPrefix(cfg.Policy, string(coflow.SchedulerAalo)):
		return 2
	case cfg.Policy == string(coflow.SchedulerFairSplit):
		return 0
	}
	return 1
}

// SweepKnobs lists the knobs Sweep can vary.
func SweepKnobs() []string {
	return []string{"pilot-fraction", "thin-limit", "first-queue-mb", "queue-growth", "skew"}
}

// Sweep repeats Compare for each value of a knob: a coordinator
// setting, or "skew", which keeps only the coflows whose largest flow is
// more than value times their smallest (docs/coflow.md).
func Sweep(tr *Trace, base Config, policies []string, invert bool, knob string,
	values []float64) ([]Comparison, error) {
	var out []Comparison
	for _, v := range values {
		cfg, t := base, tr
		switch knob {
		case "pilot-fraction":
			cfg.Coflow.PilotFraction = v
		case "thin-limit":
			if v < 0 || v != float64(int(v)) {
				return nil, fmt.Errorf("%w: thin-limit %v is not a whole number", ErrBadSimulation, v)
			}
			cfg.Coflow.ThinLimit = int(v)
		case "first-queue-mb":
			cfg.Coflow.FirstQueueLimit = v * MB
		case "queue-growth":
			cfg.Coflow.QueueGrowth = v
		case "skew":
			t = FilterSkew(tr, v)
			if len(t.Coflows) == 0 {
				return nil, fmt.Errorf("%w: no coflow has skew above %v", ErrBadSimulation, v)
			}
		default:
			return nil, fmt.Errorf("%w: unknown sweep knob %q (want one of %v)", ErrBadSimulation, knob, SweepKnobs())
		}
		c, err := Compare(t, cfg, policies, invert)
		if err != nil {
			return nil, fmt.Errorf("%s=%v: %w", knob, v, err)
		}
		c.Sweep, c.Value = knob, v
		out = append(out, c)
	}
	return out, nil
}
