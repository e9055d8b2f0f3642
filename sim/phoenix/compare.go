package phoenix

import (
	"fmt"
	"sync"

	"github.com/allot-project/allot/sim/internal/parallel"
	"github.com/allot-project/allot/sim/internal/stats"
)

// Comparison is several schedulers run on the same traces (one per
// seed), with factors against the first scheduler. Every number is the
// median over the seeds.
type Comparison struct {
	Trace   string   `json:"trace"`
	Workers int      `json:"workers"`
	Jobs    int      `json:"jobs"`
	Load    float64  `json:"load"`
	Seeds   []uint64 `json:"seeds"`
	Rows    []Row    `json:"schedulers"`
}

// Row is one scheduler's medians and its factors against the first
// scheduler: the first's time over this one's, so above 1 is faster.
type Row struct {
	Scheduler string `json:"scheduler"`
	Times
	// Sums over the seeds.
	Counts

	ShortFactor         Factors `json:"short_factor"`
	LongFactor          Factors `json:"long_factor"`
	ConstrainedFactor   Factors `json:"constrained_factor"`
	UnconstrainedFactor Factors `json:"unconstrained_factor"`
	QueuingFactor       Factors `json:"short_queuing_factor"`
}

// Factors are the first scheduler's percentiles over this one's.
type Factors struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

func factorsAgainst(base, x Percentiles) Factors {
	f := func(a, b float64) float64 {
		if b <= 0 {
			if a <= 0 {
				return 1
			}
			return 0
		}
		return a / b
	}
	return Factors{P50: f(base.P50, x.P50), P90: f(base.P90, x.P90), P99: f(base.P99, x.P99)}
}

// Runner runs configurations on every processor and remembers the
// results, so experiments that share runs make them once. Progress, when
// set, is called after every run with the runs done and started so far.
type Runner struct {
	Progress func(done, total int)
	mu       sync.Mutex
	done     map[Config]Result
	total    int
	finished int
}

// Run runs every configuration not run before and returns their results in
// order.
func (r *Runner) Run(cfgs []Config) ([]Result, error) {
	todo, err := r.claim(cfgs)
	if err != nil {
		return nil, err
	}
	parallel.Each(len(todo), func(i int) {
		res, _ := Run(todo[i]) // validated by claim
		r.mu.Lock()
		defer r.mu.Unlock()
		r.done[todo[i]] = res
		r.finished++
		if r.Progress != nil {
			r.Progress(r.finished, r.total)
		}
	})
	out := make([]Result, len(cfgs))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range cfgs {
		out[i] = r.done[c]
	}
	return out, nil
}

// claim validates cfgs, puts each in its canonical form in place, and
// returns those not run before, each once, counting them in the progress
// total.
func (r *Runner) claim(cfgs []Config) ([]Config, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = map[Config]Result{}
	}
	var todo []Config
	seen := map[Config]bool{}
	for i, c := range cfgs {
		if err := c.Validate(); err != nil {
			return nil, err
		}
		cfgs[i] = c.resolved().canonical()
		if _, ok := r.done[cfgs[i]]; !ok && !seen[cfgs[i]] {
			seen[cfgs[i]] = true
			todo = append(todo, cfgs[i])
		}
	}
	r.total += len(todo)
	return todo, nil
}

// canonical clears switches the scheduler does not read, so equal runs
// have equal configurations.
func (c Config) canonical() Config {
	if c.Scheduler != SchedPhoenix {
		c.NoReorder, c.NoNegotiate, c.NoPrefer, c.NoPartition, c.CRVSampling, c.Weighted = false, false, false, false, false, false
		c.SoftPenalty = 1
	}
	return c
}

// Compare runs each scheduler on each seed's trace of base.
func Compare(r *Runner, base Config, schedulers []string, seeds []uint64) (Comparison, error) {
	if len(schedulers) == 0 || len(seeds) == 0 {
		return Comparison{}, fmt.Errorf("%w: nothing to compare", ErrBadSimulation)
	}
	var cfgs []Config
	for _, name := range schedulers {
		for _, seed := range seeds {
			c := base
			c.Scheduler, c.Seed = name, seed
			cfgs = append(cfgs, c)
		}
	}
	res, err := r.Run(cfgs)
	if err != nil {
		return Comparison{}, err
	}
	rb := base
	rb.Scheduler = schedulers[0]
	if err := rb.Validate(); err != nil {
		return Comparison{}, err
	}
	rb = rb.resolved()
	out := Comparison{Trace: rb.Trace, Workers: rb.Workers, Jobs: rb.Jobs, Load: rb.Load, Seeds: seeds}
	for s, name := range schedulers {
		out.Rows = append(out.Rows, medianRow(name, res[s*len(seeds):(s+1)*len(seeds)]))
	}
	first := out.Rows[0]
	for i := range out.Rows {
		x := &out.Rows[i]
		x.ShortFactor = factorsAgainst(first.Short, x.Short)
		x.LongFactor = factorsAgainst(first.Long, x.Long)
		x.ConstrainedFactor = factorsAgainst(first.Constrained, x.Constrained)
		x.UnconstrainedFactor = factorsAgainst(first.Unconstrained, x.Unconstrained)
		x.QueuingFactor = factorsAgainst(first.Queuing, x.Queuing)
	}
	return out, nil
}

// medianRow takes the median of every number over one scheduler's runs.
func medianRow(name string, rs []Result) Row {
	row := Row{Scheduler: name}
	pick := func(get func(Result) Percentiles) Percentiles {
		var p Percentiles
		var n, a, b, c []float64
		for _, r := range rs {
			x := get(r)
			n, a, b, c = append(n, float64(x.N)), append(a, x.P50), append(b, x.P90), append(c, x.P99)
		}
		p.N, p.P50, p.P90, p.P99 = int(stats.Median(n)), stats.Median(a), stats.Median(b), stats.Median(c)
		return p
	}
	row.Short = pick(func(r Result) Percentiles { return r.Short })
	row.Long = pick(func(r Result) Percentiles { return r.Long })
	row.Constrained = pick(func(r Result) Percentiles { return r.Constrained })
	row.Unconstrained = pick(func(r Result) Percentiles { return r.Unconstrained })
	row.ShortConstrained = pick(func(r Result) Percentiles { return r.ShortConstrained })
	row.ShortUnconstrained = pick(func(r Result) Percentiles { return r.ShortUnconstrained })
	row.Queuing = pick(func(r Result) Percentiles { return r.Queuing })
	var jain []float64
	for _, r := range rs {
		jain = append(jain, r.Jain)
		row.add(r.Counts)
	}
	row.Jain = stats.Median(jain)
	return row
}
