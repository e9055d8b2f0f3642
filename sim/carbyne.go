package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// ErrBadCarbyne reports a Carbyne simulation that cannot run as configured.
var ErrBadCarbyne = errors.New("bad carbyne simulation")

// The workloads of RunCarbyne.
const (
	// WorkloadFig2 is the paper's Figure 2 (docs/carbyne.md): two jobs on one
	// machine of one resource.
	WorkloadFig2 = "fig2"
	// WorkloadTPCDS is synthetic DAG jobs shaped like docs/carbyne.md's common
	// setup, drawn from the seed.
	WorkloadTPCDS = "tpcds"
)

// The schedulers of RunCarbyne (docs/carbyne.md, "Simulator", says how
// each maps onto the offers allocator).
const (
	SchedDRF     = "drf"     // strict DRF shares, breadth-first in a job
	SchedDRFWC   = "drf-wc"  // work-conserving (dynamic) DRF, breadth-first
	SchedTetris  = "tetris"  // pure packing across jobs (Tetris, f = 0)
	SchedSJF     = "sjf"     // shortest critical path first
	SchedCarbyne = "carbyne" // DRF shares, altruistic jobs, leftover by SRTF
)

// What caps a job's share A_k (docs/carbyne.md, CarbyneConfig.ShareCap).
const (
	ShareCapRemaining = "remaining" // the demand of every unfinished task of the DAG
	ShareCapRunnable  = "runnable"  // the demand of running and runnable tasks
)

// CarbyneSchedulers lists the schedulers, in the order tables show them.
func CarbyneSchedulers() []string {
	return []string{SchedDRF, SchedDRFWC, SchedTetris, SchedSJF, SchedCarbyne}
}

// CarbyneConfig selects the workload, the scheduler and the knobs of one
// run. Start from DefaultCarbyneConfig.
type CarbyneConfig struct {
	Workload  string
	Scheduler string
	// Seed names the tpcds workload and every random draw of the run.
	Seed uint64
	// Jobs is the number of tpcds jobs.
	Jobs int
	// Machines is the tpcds cluster size at load 1; Load divides it (load
	// 2 is half the machines), rounded, at least one.
	Machines int
	Load     float64
	// Offline makes every tpcds job arrive at t=0; otherwise arrivals are
	// Poisson with mean MeanArrival, on whole seconds.
	Offline     bool
	MeanArrival time.Duration
	// Altruism is P(altruism) of carbyne's jobs, in [0, 1].
	Altruism float64
	// Misestimate is X in percent: carbyne's planner (and sjf's critical
	// paths) see demands and durations (1 + X/100) times the true ones;
	// execution uses the true ones. At least -90.
	Misestimate float64
	// Greedy is the fraction of jobs that are never altruistic.
	Greedy float64
	// ShareInterval is how often, at most, the shares A_k are recomputed
	// between job arrivals and completions (which always recompute them);
	// zero recomputes them every round.
	ShareInterval time.Duration
	// ShareCap is what caps a job's share A_k: ShareCapRemaining (the
	// default), the demand of every unfinished task of its DAG, or
	// ShareCapRunnable, the demand of its running and runnable tasks.
	ShareCap string
}

// DefaultCarbyneConfig is docs/carbyne.md's common setup: tpcds, 250 jobs on 100
// machines, Poisson arrivals every 20 s on average, P(altruism) = 1, and
// shares recomputed at most every 5 s between arrivals and completions.
func DefaultCarbyneConfig() CarbyneConfig {
	return CarbyneConfig{
		Workload:      WorkloadTPCDS,
		Scheduler:     SchedCarbyne,
		Seed:          1,
		Jobs:          250,
		Machines:      100,
		Load:          1,
		MeanArrival:   20 * time.Second,
		Altruism:      1,
		ShareInterval: 5 * time.Second,
		ShareCap:      ShareCapRemaining,
	}
}

// Validate checks the configuration.
func (c CarbyneConfig) Validate() error {
	switch {
	case c.Workload != WorkloadFig2 && c.Workload != WorkloadTPCDS:
		return fmt.Errorf("%w: workload %q (want %s or %s)", ErrBadCarbyne, c.Workload, WorkloadFig2, WorkloadTPCDS)
	case !slices.Contains(CarbyneSchedulers(), c.Scheduler):
		return fmt.Errorf("%w: scheduler %q (want one of %s)", ErrBadCarbyne, c.Scheduler, strings.Join(CarbyneSchedulers(), ", "))
	case c.Jobs < 1 || c.Jobs > 100000:
		return fmt.Errorf("%w: jobs %d (want 1 to 100000)", ErrBadCarbyne, c.Jobs)
	case c.Machines < 1 || c.Machines > 100000:
		return fmt.Errorf("%w: machines %d (want 1 to 100000)", ErrBadCarbyne, c.Machines)
	case !(c.Load > 0) || math.IsInf(c.Load, 0):
		return fmt.Errorf("%w: load %v (want > 0)", ErrBadCarbyne, c.Load)
	case c.MeanArrival < 0:
		return fmt.Errorf("%w: negative mean arrival", ErrBadCarbyne)
	case !(c.Altruism >= 0 && c.Altruism <= 1):
		return fmt.Errorf("%w: altruism %v (want 0 to 1)", ErrBadCarbyne, c.Altruism)
	case !(c.Misestimate >= -90 && c.Misestimate <= 1000):
		return fmt.Errorf("%w: misestimate %v%% (want -90 to 1000)", ErrBadCarbyne, c.Misestimate)
	case !(c.Greedy >= 0 && c.Greedy <= 1):
		return fmt.Errorf("%w: greedy fraction %v (want 0 to 1)", ErrBadCarbyne, c.Greedy)
	case c.ShareInterval < 0:
		return fmt.Errorf("%w: negative share interval", ErrBadCarbyne)
	case c.ShareCap != "" && c.ShareCap != ShareCapRemaining && c.ShareCap != ShareCapRunnable:
		return fmt.Errorf("%w: share cap %q (want %s or %s)", ErrBadCarbyne, c.ShareCap, ShareCapRemaining, ShareCapRunnable)
	}
	return nil
}

// workload builds the configured workload.
func (c CarbyneConfig) workload() carbyneWorkload {
	var w carbyneWorkload
	if c.Workload == WorkloadFig2 {
		w = fig2Workload()
	} else {
		w = carbyneWorkload{
			machines: max(1, int(math.Round(float64(c.Machines)/c.Load))),
			machine:  protocol.Scalars(map[string]int64{protocol.ResCPUs: tpcdsMachineCPUs, protocol.ResMem: tpcdsMachineMem}),
			jobs:     tpcdsWorkload(c.Jobs, c.Seed, c.Offline, c.MeanArrival),
		}
	}
	markGreedy(w.jobs, c.Greedy, c.Seed)
	misestimate(w.jobs, c.Misestimate)
	return w
}

// CarbyneResult is the outcome of one run. Times are in seconds.
type CarbyneResult struct {
	Workload  string                `json:"workload"`
	Scheduler string                `json:"scheduler"`
	Seed      uint64                `json:"seed"`
	Jobs      map[string]CarbyneJob `json:"jobs"`
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

// CarbyneJob is one job's outcome.
type CarbyneJob struct {
	Arrival float64 `json:"arrival"`
	JCT     float64 `json:"jct"`
	Greedy  bool    `json:"greedy,omitempty"`
	// PlannedJCT is T_k of the job's first plan (carbyne only): the time
	// it would take in its share at arrival. Zero when there was none.
	PlannedJCT float64 `json:"planned_jct,omitempty"`
}

// RunCarbyne runs one workload under one scheduler.
func RunCarbyne(cfg CarbyneConfig) (CarbyneResult, error) {
	if err := cfg.Validate(); err != nil {
		return CarbyneResult{}, err
	}
	e, err := newEngine(cfg, cfg.workload())
	if err != nil {
		return CarbyneResult{}, err
	}
	return e.run()
}
