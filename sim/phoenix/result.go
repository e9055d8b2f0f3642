package phoenix

import (
	"slices"

	"github.com/allot-project/allot/sim/internal/stats"
)

// Percentiles are nearest-rank percentiles of job response (or
// queuing) times in seconds over N jobs.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

func percentilesOf(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Percentiles{N: len(s), P50: stats.NearestRank(s, 0.5), P90: stats.NearestRank(s, 0.9), P99: stats.NearestRank(s, 0.99)}
}

// Times are a run's response times (last task end - submission) by
// job class: short and long by the trace's cutoff, constrained by whether
// the trace gave the job constraints (every scheduler reports the same job
// sets).
type Times struct {
	Short              Percentiles `json:"short"`
	Long               Percentiles `json:"long"`
	Constrained        Percentiles `json:"constrained"`
	Unconstrained      Percentiles `json:"unconstrained"`
	ShortConstrained   Percentiles `json:"short_constrained"`
	ShortUnconstrained Percentiles `json:"short_unconstrained"`
	// Queuing is the job queuing time (mean over the job's tasks of start -
	// submission) of short jobs.
	Queuing Percentiles `json:"short_queuing"`
	// Jain is Jain's index over the mean slowdown (response time over the
	// longest task) of the four classes short/long x constrained or not.
	Jain float64 `json:"jain"`
}

// Counts are a run's event counts. Violations counts tasks started
// on a worker breaking a hard constraint (always 0); GuardBreaches counts
// reservations jumped past CAP x their estimate (always 0).
type Counts struct {
	Violations    int `json:"violations"`
	GuardBreaches int `json:"guard_breaches"`
	Rejected      int `json:"rejected"`
	Relaxed       int `json:"relaxed"`
}

func (c *Counts) add(o Counts) {
	c.Violations += o.Violations
	c.GuardBreaches += o.GuardBreaches
	c.Rejected += o.Rejected
	c.Relaxed += o.Relaxed
}

// Result is one run's outcome.
type Result struct {
	Config Config `json:"config"`
	Times
	All Percentiles `json:"all"`
	Counts
	Stolen int `json:"stolen,omitempty"`
	// Makespan is the simulated time at which the last job ended, seconds.
	Makespan float64 `json:"makespan"`
}

// Run simulates one configuration.
func Run(cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.resolved()
	s := newEngine(cfg)
	s.run()
	return s.result(), nil
}

func (s *engine) result() Result {
	var short, long, con, uncon, sc, su, all, queue []float64
	var slow [4][]float64
	res := Result{Config: s.cfg,
		Counts: Counts{Violations: s.violations, GuardBreaches: s.guardBreaches, Relaxed: s.relaxedJobs},
		Stolen: s.stolen, Makespan: s.now}
	for _, j := range s.jobs {
		if j.reject {
			res.Rejected++
			continue
		}
		rt := j.finish - j.spec.submit
		all = append(all, rt)
		constrained := len(j.spec.cons) > 0
		cls := 0
		if j.spec.long {
			long = append(long, rt)
			cls = 2
		} else {
			short = append(short, rt)
			queue = append(queue, j.waitSum/float64(j.tasks()))
			if constrained {
				sc = append(sc, rt)
			} else {
				su = append(su, rt)
			}
		}
		if constrained {
			con = append(con, rt)
			cls++
		} else {
			uncon = append(uncon, rt)
		}
		slow[cls] = append(slow[cls], rt/slices.Max(j.spec.durs))
	}
	res.Short, res.Long = percentilesOf(short), percentilesOf(long)
	res.Constrained, res.Unconstrained = percentilesOf(con), percentilesOf(uncon)
	res.ShortConstrained, res.ShortUnconstrained = percentilesOf(sc), percentilesOf(su)
	res.All, res.Queuing = percentilesOf(all), percentilesOf(queue)
	// Jain's index over the classes' mean slowdowns: 1, perfectly fair, when
	// no job ran.
	var means []float64
	for _, xs := range slow {
		if len(xs) > 0 {
			means = append(means, stats.Mean(xs))
		}
	}
	res.Jain = 1
	if j, ok := stats.Jain(means); ok {
		res.Jain = j
	}
	return res
}
