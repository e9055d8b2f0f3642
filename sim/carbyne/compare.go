package carbyne

import (
	"fmt"
	"slices"
	"strings"

	"github.com/allot-project/allot/sim/internal/parallel"
	"github.com/allot-project/allot/sim/internal/stats"
)

// Comparison is several schedulers run on the same workloads, with
// factors against the first (docs/carbyne.md): every number is the median over
// the seeds of that number for each seed.
type Comparison struct {
	Workload string   `json:"workload"`
	Seeds    []uint64 `json:"seeds"`
	// Sweep names the knob a sweep varied, and Value its value here.
	Sweep string  `json:"sweep,omitempty"`
	Value float64 `json:"value"`
	Rows  []Row   `json:"schedulers"`
}

// Row is one scheduler's metrics and its factors against the first
// scheduler's. A factor is the first scheduler's time over this one's, so
// above 1 is better.
type Row struct {
	Scheduler string  `json:"scheduler"`
	AvgJCT    float64 `json:"avg_jct"`
	P95JCT    float64 `json:"p95_jct"`
	Makespan  float64 `json:"makespan"`
	Jain      float64 `json:"jain"`
	// JainShortfall is the shortfall index (Result.JainShortfall).
	JainShortfall  float64 `json:"jain_shortfall"`
	AvgFactor      float64 `json:"avg_jct_factor"`
	P95Factor      float64 `json:"p95_jct_factor"`
	MakespanFactor float64 `json:"makespan_factor"`
	// JainDelta is this scheduler's Jain's index less the first's.
	JainDelta float64 `json:"jain_delta"`
	// LeftoverWork is the fraction of the work run on leftover offers.
	LeftoverWork float64    `json:"leftover_work"`
	PerJob       JobFactors `json:"per_job"`
}

// JobFactors describes the distribution of per-job factors: each job's
// completion time under the first scheduler over its time under this one.
type JobFactors struct {
	AtLeast1 float64 `json:"at_least_1"` // fraction of jobs with factor ≥ 1
	Below1   float64 `json:"below_1"`    // fraction slowed down
	Below08  float64 `json:"below_0_8"`  // fraction slowed below 0.8×
	Min      float64 `json:"min"`
	// Deciles are the 10th, 20th, ..., 90th percentiles (nearest rank).
	Deciles []float64 `json:"deciles"`
}

// Compare runs each scheduler on each seed's workload.
func Compare(base Config, schedulers []string, seeds []uint64) (Comparison, error) {
	out, err := Sweep(base, schedulers, seeds, "", nil)
	if err != nil {
		return Comparison{}, err
	}
	return out[0], nil
}

// SweepKnobs lists the knobs Sweep can vary.
func SweepKnobs() []string { return []string{"altruism", "greedy", "misestimate", "load"} }

// Sweep runs Compare once per value of a knob (one of
// SweepKnobs; empty for a single comparison at base). Runs are spread over
// the available processors, and a run that does not depend on the knob
// (a baseline's, for altruism, say) is made once.
func Sweep(base Config, schedulers []string, seeds []uint64, knob string, values []float64) ([]Comparison, error) {
	if len(schedulers) == 0 || len(seeds) == 0 {
		return nil, fmt.Errorf("%w: nothing to compare", ErrBadSimulation)
	}
	if knob == "" {
		values = []float64{0}
	} else if !slices.Contains(SweepKnobs(), knob) || len(values) == 0 {
		return nil, fmt.Errorf("%w: sweep %q (want one of %s, with values)", ErrBadSimulation, knob, strings.Join(SweepKnobs(), ", "))
	}
	grid := make([][][]Config, len(values)) // value, scheduler, seed
	var todo []Config
	seen := map[Config]bool{}
	for v, x := range values {
		grid[v] = make([][]Config, len(schedulers))
		for s, name := range schedulers {
			for _, seed := range seeds {
				cfg := base
				cfg.Scheduler, cfg.Seed = name, seed
				setKnob(&cfg, knob, x)
				if err := cfg.Validate(); err != nil {
					return nil, err
				}
				cfg = cfg.canonical()
				grid[v][s] = append(grid[v][s], cfg)
				if !seen[cfg] {
					seen[cfg] = true
					todo = append(todo, cfg)
				}
			}
		}
	}
	results, err := runAll(todo)
	if err != nil {
		return nil, err
	}
	out := make([]Comparison, len(values))
	for v, x := range values {
		c := Comparison{Workload: base.Workload, Seeds: seeds, Sweep: knob, Value: x}
		for s, name := range schedulers {
			c.Rows = append(c.Rows, compareRow(name, results, grid[v][0], grid[v][s]))
		}
		out[v] = c
	}
	return out, nil
}

func setKnob(cfg *Config, knob string, x float64) {
	switch knob {
	case "altruism":
		cfg.Altruism = x
	case "greedy":
		cfg.Greedy = x
	case "misestimate":
		cfg.Misestimate = x
	case "load":
		cfg.Load = x
	}
}

// canonical clears the knobs the configured scheduler does not use, so
// that equal runs have equal configurations.
func (c Config) canonical() Config {
	if c.Scheduler != SchedCarbyne {
		c.Altruism, c.Greedy = 0, 0
	}
	if c.Scheduler != SchedCarbyne && c.Scheduler != SchedSJF {
		c.Misestimate = 0
	}
	if !newPolicy(c.Scheduler).usesShares() {
		c.ShareInterval, c.ShareCap = 0, ""
	} else if c.ShareCap == "" {
		c.ShareCap = ShareCapRemaining
	}
	if c.Workload == WorkloadFig2 {
		c.Seed, c.Jobs, c.Machines, c.Load, c.Offline, c.MeanArrival = 0, 1, 1, 1, false, 0
	}
	return c
}

// runAll runs every configuration, as many at once as there are
// processors.
func runAll(cfgs []Config) (map[Config]Result, error) {
	results := make([]Result, len(cfgs))
	errs := make([]error, len(cfgs))
	parallel.Each(len(cfgs), func(i int) { results[i], errs[i] = Run(cfgs[i]) })
	out := make(map[Config]Result, len(cfgs))
	for i, cfg := range cfgs {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s, seed %d: %w", cfg.Scheduler, cfg.Seed, errs[i])
		}
		out[cfg] = results[i]
	}
	return out, nil
}

// compareRow summarises one scheduler's runs against the first's, seed by
// seed, as medians over the seeds.
func compareRow(name string, results map[Config]Result, base, runs []Config) Row {
	const fields = 14
	var m [fields][]float64
	var deciles [9][]float64
	for i := range runs {
		b, r := results[base[i]], results[runs[i]]
		pj := jobFactors(b, r)
		for k, x := range [fields]float64{r.AvgJCT, r.P95JCT, r.Makespan, r.Jain,
			stats.Ratio(b.AvgJCT, r.AvgJCT), stats.Ratio(b.P95JCT, r.P95JCT), stats.Ratio(b.Makespan, r.Makespan), r.Jain - b.Jain,
			pj.AtLeast1, pj.Below1, pj.Below08, pj.Min, r.LeftoverWork, r.JainShortfall} {
			m[k] = append(m[k], x)
		}
		for k, x := range pj.Deciles {
			deciles[k] = append(deciles[k], x)
		}
	}
	row := Row{Scheduler: name, AvgJCT: stats.Median(m[0]), P95JCT: stats.Median(m[1]), Makespan: stats.Median(m[2]),
		Jain: stats.Median(m[3]), AvgFactor: stats.Median(m[4]), P95Factor: stats.Median(m[5]), MakespanFactor: stats.Median(m[6]),
		JainDelta: stats.Median(m[7]), LeftoverWork: stats.Median(m[12]), JainShortfall: stats.Median(m[13]),
		PerJob: JobFactors{AtLeast1: stats.Median(m[8]), Below1: stats.Median(m[9]), Below08: stats.Median(m[10]), Min: stats.Median(m[11])}}
	for k := range deciles {
		row.PerJob.Deciles = append(row.PerJob.Deciles, stats.Median(deciles[k]))
	}
	return row
}

// jobFactors compares two runs of one workload job by job.
func jobFactors(base, run Result) JobFactors {
	var fs []float64
	var at1, b1, b08 int
	for name, b := range base.Jobs {
		f := stats.Ratio(b.JCT, run.Jobs[name].JCT)
		fs = append(fs, f)
		switch {
		case f >= 1:
			at1++
		case f < 0.8:
			b08++
			b1++
		default:
			b1++
		}
	}
	n := float64(max(1, len(fs)))
	out := JobFactors{AtLeast1: float64(at1) / n, Below1: float64(b1) / n, Below08: float64(b08) / n}
	if len(fs) > 0 {
		out.Min = slices.Min(fs)
	}
	for k := 1; k <= 9; k++ {
		out.Deciles = append(out.Deciles, stats.Percentile(fs, float64(k)/10))
	}
	return out
}
