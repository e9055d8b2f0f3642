package carbyne

import (
	"math"
	"time"

	"github.com/allot-project/allot/sim/internal/stats"
)

// Result is the outcome of one run. Times are in seconds.
type Result struct {
	Workload  string                `json:"workload"`
	Scheduler string                `json:"scheduler"`
	Seed      uint64                `json:"seed"`
	Jobs      map[string]JobOutcome `json:"jobs"`
	// Order lists the jobs in arrival order.
	Order []string `json:"-"`
	// AvgJCT and P95JCT are the mean and the 95th percentile (nearest
	// rank) of the jobs' completion times, finish less arrival.
	AvgJCT float64 `json:"avg_jct"`
	P95JCT float64 `json:"p95_jct"`
	// Makespan is when the last job finished.
	Makespan float64 `json:"makespan"`
	// Jain is Jain's fairness index, the mean over 60 s windows of
	// (Σx)²/(n·Σx²), x being each job's time-averaged dominant share over
	// the part of the window it was active in.
	Jain float64 `json:"jain"`
	// JainShortfall is the shortfall index: the mean over 60 s windows of
	// Jain's index of min(1, usage/entitlement) per active job, the
	// entitlement being the dominant share of its share A_k (1 when every
	// active job got at least its share).
	JainShortfall float64 `json:"jain_shortfall"`
	// Leftover is the leftover pool of the first round, as a fraction of
	// the cluster (largest over resources): before the leftover phase, then
	// after each leftover offer.
	Leftover []float64 `json:"leftover"`
	// LeftoverWork is the fraction of all work (each task's dominant
	// share of the cluster times its run time) that ran on leftover offers.
	LeftoverWork float64 `json:"leftover_work"`
	// Planned counts the jobs whose first plan had a finite T_k (carbyne
	// only), Late those of them that finished after it, and MaxLate the
	// worst lateness as a fraction of T_k: Theorem 3.1 says that offline,
	// with exact estimates, no job is late.
	Planned int     `json:"planned,omitempty"`
	Late    int     `json:"late,omitempty"`
	MaxLate float64 `json:"max_late,omitempty"`
	// Rounds counts allocation rounds and Plans the plans of carbyne's jobs.
	Rounds int `json:"rounds"`
	Plans  int `json:"plans,omitempty"`
}

// JobOutcome is one job's outcome.
type JobOutcome struct {
	Arrival float64 `json:"arrival"`
	JCT     float64 `json:"jct"`
	Greedy  bool    `json:"greedy,omitempty"`
	// PlannedJCT is T_k of the job's first plan (carbyne only): the time
	// it would take in its share at arrival. Zero when there was none.
	PlannedJCT float64 `json:"planned_jct,omitempty"`
}

// Run runs one workload under one scheduler.
func Run(cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	e, err := newEngine(cfg, cfg.buildWorkload())
	if err != nil {
		return Result{}, err
	}
	return e.run()
}

// result gathers the run's metrics.
func (e *engine) result() Result {
	res := Result{Workload: e.cfg.Workload, Scheduler: e.cfg.Scheduler, Seed: e.cfg.Seed,
		Jobs: map[string]JobOutcome{}, Leftover: roundAll(e.leftover), Rounds: e.rounds, Plans: e.plans}
	if res.Leftover == nil {
		res.Leftover = []float64{}
	}
	jcts := make([]float64, 0, len(e.jobs))
	var makespan time.Duration
	for _, j := range e.jobs {
		jct := (j.finish - j.spec.arrival).Seconds()
		cj := JobOutcome{Arrival: j.spec.arrival.Seconds(), JCT: jct, Greedy: j.spec.greedy}
		if j.planned > 0 {
			cj.PlannedJCT = j.planned.Seconds()
			res.Planned++
			if late := j.finish - j.spec.arrival - j.planned; late > 0 {
				res.Late++
				res.MaxLate = max(res.MaxLate, late.Seconds()/j.planned.Seconds())
			}
		}
		res.Jobs[j.name] = cj
		res.Order = append(res.Order, j.name)
		jcts = append(jcts, jct)
		makespan = max(makespan, j.finish)
	}
	res.AvgJCT = stats.Mean(jcts)
	res.P95JCT = stats.Percentile(jcts, 0.95)
	res.Makespan = makespan.Seconds()
	res.Jain = e.fair.index(e.jobs, makespan)
	res.JainShortfall = e.fair.shortfallIndex(e.jobs, makespan)
	if total := e.fairWork + e.leftoverWork; total > 0 {
		res.LeftoverWork = e.leftoverWork / total
	}
	return res
}

// roundAll rounds fractions to 1e-9, so that 0.5 − 0.29 prints as 0.21.
func roundAll(xs []float64) []float64 {
	if xs == nil {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x*1e9) / 1e9
	}
	return out
}
