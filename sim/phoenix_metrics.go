package sim

import (
	"math"
	"slices"
)

// PhoenixPercentiles are nearest-rank percentiles of job response (or
// queuing) times in seconds over N jobs.
type PhoenixPercentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

func pxPercentiles(xs []float64) PhoenixPercentiles {
	if len(xs) == 0 {
		return PhoenixPercentiles{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return PhoenixPercentiles{N: len(s), P50: at(0.5), P90: at(0.9), P99: at(0.99)}
}

// PhoenixTimes are a run's response times (last task end - submission) by
// job class: short and long by the trace's cutoff, constrained by whether
// the trace gave the job constraints (every scheduler reports the same job
// sets).
type PhoenixTimes struct {
	Short              PhoenixPercentiles `json:"short"`
	Long               PhoenixPercentiles `json:"long"`
	Constrained        PhoenixPercentiles `json:"constrained"`
	Unconstrained      PhoenixPercentiles `json:"unconstrained"`
	ShortConstrained   PhoenixPercentiles `json:"short_constrained"`
	ShortUnconstrained PhoenixPercentiles `json:"short_unconstrained"`
	// Queuing is the job queuing time (mean over the job's tasks of start -
	// submission) of short jobs.
	Queuing PhoenixPercentiles `json:"short_queuing"`
	// Jain is Jain's index over the mean slowdown (response time over the
	// longest task) of the four classes short/long x constrained or not.
	Jain float64 `json:"jain"`
}

// PhoenixCounts are a run's event counts. Violations counts tasks started
// on a worker breaking a hard constraint (always 0); GuardBreaches counts
// reservations jumped past CAP x their estimate (always 0).
type PhoenixCounts struct {
	Violations    int `json:"violations"`
	GuardBreaches int `json:"guard_breaches"`
	Rejected      int `json:"rejected"`
	Relaxed       int `json:"relaxed"`
}

func (c *PhoenixCounts) add(o PhoenixCounts) {
	c.Violations += o.Violations
	c.GuardBreaches += o.GuardBreaches
	c.Rejected += o.Rejected
	c.Relaxed += o.Relaxed
}

// PhoenixResult is one run's outcome.
type PhoenixResult struct {
	Config PhoenixConfig `json:"config"`
	PhoenixTimes
	All PhoenixPercentiles `json:"all"`
	PhoenixCounts
	Stolen int `json:"stolen,omitempty"`
	// Makespan is the simulated time at which the last job ended, seconds.
	Makespan float64 `json:"makespan"`
}

// RunPhoenix simulates one configuration.
func RunPhoenix(cfg PhoenixConfig) (PhoenixResult, error) {
	if err := cfg.Validate(); err != nil {
		return PhoenixResult{}, err
	}
	cfg = cfg.resolved()
	s := newPxSim(cfg)
	s.run()
	return s.result(), nil
}

func (s *pxSim) result() PhoenixResult {
	var short, long, con, uncon, sc, su, all, queue []float64
	var slow [4][]float64
	res := PhoenixResult{Config: s.cfg,
		PhoenixCounts: PhoenixCounts{Violations: s.violations, GuardBreaches: s.guardBreaches, Relaxed: s.relaxedJobs},
		Stolen:        s.stolen, Makespan: s.now}
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
	res.Short, res.Long = pxPercentiles(short), pxPercentiles(long)
	res.Constrained, res.Unconstrained = pxPercentiles(con), pxPercentiles(uncon)
	res.ShortConstrained, res.ShortUnconstrained = pxPercentiles(sc), pxPercentiles(su)
	res.All, res.Queuing = pxPercentiles(all), pxPercentiles(queue)
	var means []float64
	for _, xs := range slow {
		if len(xs) > 0 {
			sum := 0.0
			for _, x := range xs {
				sum += x
			}
			means = append(means, sum/float64(len(xs)))
		}
	}
	res.Jain = pxJain(means)
	return res
}

// pxJain is Jain's fairness index (Σx)²/(n·Σx²).
func pxJain(xs []float64) float64 {
	if len(xs) == 0 {
		return 1
	}
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}
