package sim

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// PhoenixComparison is several schedulers run on the same traces (one per
// seed), with factors against the first scheduler. Every number is the
// median over the seeds.
type PhoenixComparison struct {
	Trace   string       `json:"trace"`
	Workers int          `json:"workers"`
	Jobs    int          `json:"jobs"`
	Load    float64      `json:"load"`
	Seeds   []uint64     `json:"seeds"`
	Rows    []PhoenixRow `json:"schedulers"`
}

// PhoenixRow is one scheduler's medians and its factors against the first
// scheduler: the first's time over this one's, so above 1 is faster.
type PhoenixRow struct {
	Scheduler string `json:"scheduler"`
	PhoenixTimes
	// Sums over the seeds.
	PhoenixCounts

	ShortFactor         PhoenixFactors `json:"short_factor"`
	LongFactor          PhoenixFactors `json:"long_factor"`
	ConstrainedFactor   PhoenixFactors `json:"constrained_factor"`
	UnconstrainedFactor PhoenixFactors `json:"unconstrained_factor"`
	QueuingFactor       PhoenixFactors `json:"short_queuing_factor"`
}

// PhoenixFactors are the first scheduler's percentiles over this one's.
type PhoenixFactors struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

func pxFactors(base, x PhoenixPercentiles) PhoenixFactors {
	f := func(a, b float64) float64 {
		if b <= 0 {
			if a <= 0 {
				return 1
			}
			return 0
		}
		return a / b
	}
	return PhoenixFactors{P50: f(base.P50, x.P50), P90: f(base.P90, x.P90), P99: f(base.P99, x.P99)}
}

// PhoenixRunner runs configurations on every processor and remembers the
// results, so experiments that share runs make them once. Progress, when
// set, is called after every run with the runs done and started so far.
type PhoenixRunner struct {
	Progress func(done, total int)
	mu       sync.Mutex
	done     map[PhoenixConfig]PhoenixResult
	total    int
	finished int
}

// Run runs every configuration not run before and returns their results in
// order.
func (r *PhoenixRunner) Run(cfgs []PhoenixConfig) ([]PhoenixResult, error) {
	r.mu.Lock()
	if r.done == nil {
		r.done = map[PhoenixConfig]PhoenixResult{}
	}
	var todo []PhoenixConfig
	seen := map[PhoenixConfig]bool{}
	for i, c := range cfgs {
		if err := c.Validate(); err != nil {
			r.mu.Unlock()
			return nil, err
		}
		cfgs[i] = c.resolved().canonical()
		if _, ok := r.done[cfgs[i]]; !ok && !seen[cfgs[i]] {
			seen[cfgs[i]] = true
			todo = append(todo, cfgs[i])
		}
	}
	r.total += len(todo)
	r.mu.Unlock()
	next := make(chan PhoenixConfig)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				res, _ := RunPhoenix(c) // validated above
				r.mu.Lock()
				r.done[c] = res
				r.finished++
				if r.Progress != nil {
					r.Progress(r.finished, r.total)
				}
				r.mu.Unlock()
			}
		}()
	}
	for _, c := range todo {
		next <- c
	}
	close(next)
	wg.Wait()
	out := make([]PhoenixResult, len(cfgs))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range cfgs {
		out[i] = r.done[c]
	}
	return out, nil
}

// canonical clears switches the scheduler does not read, so equal runs
// have equal configurations.
func (c PhoenixConfig) canonical() PhoenixConfig {
	if c.Scheduler != PhoenixPhoenix {
		c.NoReorder, c.NoNegotiate, c.NoPrefer, c.NoPartition, c.CRVSampling, c.Weighted = false, false, false, false, false, false
		c.SoftPenalty = 1
	}
	return c
}

// ComparePhoenix runs each scheduler on each seed's trace of base.
func ComparePhoenix(r *PhoenixRunner, base PhoenixConfig, schedulers []string, seeds []uint64) (PhoenixComparison, error) {
	if len(schedulers) == 0 || len(seeds) == 0 {
		return PhoenixComparison{}, fmt.Errorf("%w: nothing to compare", ErrBadPhoenix)
	}
	var cfgs []PhoenixConfig
	for _, name := range schedulers {
		for _, seed := range seeds {
			c := base
			c.Scheduler, c.Seed = name, seed
			cfgs = append(cfgs, c)
		}
	}
	res, err := r.Run(cfgs)
	if err != nil {
		return PhoenixComparison{}, err
	}
	rb := base
	rb.Scheduler = schedulers[0]
	if err := rb.Validate(); err != nil {
		return PhoenixComparison{}, err
	}
	rb = rb.resolved()
	out := PhoenixComparison{Trace: rb.Trace, Workers: rb.Workers, Jobs: rb.Jobs, Load: rb.Load, Seeds: seeds}
	for s, name := range schedulers {
		out.Rows = append(out.Rows, pxMedianRow(name, res[s*len(seeds):(s+1)*len(seeds)]))
	}
	first := out.Rows[0]
	for i := range out.Rows {
		x := &out.Rows[i]
		x.ShortFactor = pxFactors(first.Short, x.Short)
		x.LongFactor = pxFactors(first.Long, x.Long)
		x.ConstrainedFactor = pxFactors(first.Constrained, x.Constrained)
		x.UnconstrainedFactor = pxFactors(first.Unconstrained, x.Unconstrained)
		x.QueuingFactor = pxFactors(first.Queuing, x.Queuing)
	}
	return out, nil
}

// pxMedianRow takes the median of every number over one scheduler's runs.
func pxMedianRow(name string, rs []PhoenixResult) PhoenixRow {
	row := PhoenixRow{Scheduler: name}
	pick := func(get func(PhoenixResult) PhoenixPercentiles) PhoenixPercentiles {
		var p PhoenixPercentiles
		var n, a, b, c []float64
		for _, r := range rs {
			x := get(r)
			n, a, b, c = append(n, float64(x.N)), append(a, x.P50), append(b, x.P90), append(c, x.P99)
		}
		p.N, p.P50, p.P90, p.P99 = int(pxMedian(n)), pxMedian(a), pxMedian(b), pxMedian(c)
		return p
	}
	row.Short = pick(func(r PhoenixResult) PhoenixPercentiles { return r.Short })
	row.Long = pick(func(r PhoenixResult) PhoenixPercentiles { return r.Long })
	row.Constrained = pick(func(r PhoenixResult) PhoenixPercentiles { return r.Constrained })
	row.Unconstrained = pick(func(r PhoenixResult) PhoenixPercentiles { return r.Unconstrained })
	row.ShortConstrained = pick(func(r PhoenixResult) PhoenixPercentiles { return r.ShortConstrained })
	row.ShortUnconstrained = pick(func(r PhoenixResult) PhoenixPercentiles { return r.ShortUnconstrained })
	row.Queuing = pick(func(r PhoenixResult) PhoenixPercentiles { return r.Queuing })
	var jain []float64
	for _, r := range rs {
		jain = append(jain, r.Jain)
		row.add(r.PhoenixCounts)
	}
	row.Jain = pxMedian(jain)
	return row
}

func pxMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
