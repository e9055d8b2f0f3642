package carbyne

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// ErrBadSimulation reports a Carbyne simulation that cannot run as configured.
var ErrBadSimulation = errors.New("bad carbyne simulation")

// The workloads of Run.
const (
	// WorkloadFig2 is the paper's Figure 2 (docs/carbyne.md): two jobs on one
	// machine of one resource.
	WorkloadFig2 = "fig2"
	// WorkloadTPCDS is synthetic DAG jobs shaped like docs/carbyne.md's common
	// setup, drawn from the seed.
	WorkloadTPCDS = "tpcds"
)

// The schedulers of Run (docs/carbyne.md, "Simulator", says how
// each maps onto the offers allocator).
const (
	SchedDRF     = "drf"     // strict DRF shares, breadth-first in a job
	SchedDRFWC   = "drf-wc"  // work-conserving (dynamic) DRF, breadth-first
	SchedTetris  = "tetris"  // pure packing across jobs (Tetris, f = 0)
	SchedSJF     = "sjf"     // shortest critical path first
	SchedCarbyne = "carbyne" // DRF shares, altruistic jobs, leftover by SRTF
)

// What caps a job's share A_k (docs/carbyne.md, Config.ShareCap).
const (
	ShareCapRemaining = "remaining" // the demand of every unfinished task of the DAG
	ShareCapRunnable  = "runnable"  // the demand of running and runnable tasks
)

// Schedulers lists the schedulers, in the order tables show them.
func Schedulers() []string {
	return []string{SchedDRF, SchedDRFWC, SchedTetris, SchedSJF, SchedCarbyne}
}

// Config selects the workload, the scheduler and the knobs of one
// run. Start from DefaultConfig.
type Config struct {
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

// DefaultConfig is docs/carbyne.md's common setup: tpcds, 250 jobs on 100
// machines, Poisson arrivals every 20 s on average, P(altruism) = 1, and
// shares recomputed at most every 5 s between arrivals and completions.
func DefaultConfig() Config {
	return Config{
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
func (c Config) Validate() error {
	switch {
	case c.Workload != WorkloadFig2 && c.Workload != WorkloadTPCDS:
		return fmt.Errorf("%w: workload %q (want %s or %s)", ErrBadSimulation, c.Workload, WorkloadFig2, WorkloadTPCDS)
	case !slices.Contains(Schedulers(), c.Scheduler):
		return fmt.Errorf("%w: scheduler %q (want one of %s)", ErrBadSimulation, c.Scheduler, strings.Join(Schedulers(), ", "))
	case c.Jobs < 1 || c.Jobs > 100000:
		return fmt.Errorf("%w: jobs %d (want 1 to 100000)", ErrBadSimulation, c.Jobs)
	case c.Machines < 1 || c.Machines > 100000:
		return fmt.Errorf("%w: machines %d (want 1 to 100000)", ErrBadSimulation, c.Machines)
	case !(c.Load > 0) || math.IsInf(c.Load, 0):
		return fmt.Errorf("%w: load %v (want > 0)", ErrBadSimulation, c.Load)
	case c.MeanArrival < 0:
		return fmt.Errorf("%w: negative mean arrival", ErrBadSimulation)
	case !(c.Altruism >= 0 && c.Altruism <= 1):
		return fmt.Errorf("%w: altruism %v (want 0 to 1)", ErrBadSimulation, c.Altruism)
	case !(c.Misestimate >= -90 && c.Misestimate <= 1000):
		return fmt.Errorf("%w: misestimate %v%% (want -90 to 1000)", ErrBadSimulation, c.Misestimate)
	case !(c.Greedy >= 0 && c.Greedy <= 1):
		return fmt.Errorf("%w: greedy fraction %v (want 0 to 1)", ErrBadSimulation, c.Greedy)
	case c.ShareInterval < 0:
		return fmt.Errorf("%w: negative share interval", ErrBadSimulation)
	case c.ShareCap != "" && c.ShareCap != ShareCapRemaining && c.ShareCap != ShareCapRunnable:
		return fmt.Errorf("%w: share cap %q (want %s or %s)", ErrBadSimulation, c.ShareCap, ShareCapRemaining, ShareCapRunnable)
	}
	return nil
}

// workload builds the configured workload.
func (c Config) buildWorkload() workload {
	var w workload
	if c.Workload == WorkloadFig2 {
		w = fig2Workload()
	} else {
		w = workload{
			machines: max(1, int(math.Round(float64(c.Machines)/c.Load))),
			machine:  protocol.Scalars(map[string]int64{protocol.ResCPUs: tpcdsMachineCPUs, protocol.ResMem: tpcdsMachineMem}),
			jobs:     tpcdsWorkload(c.Jobs, c.Seed, c.Offline, c.MeanArrival),
		}
	}
	markGreedy(w.jobs, c.Greedy, c.Seed)
	misestimate(w.jobs, c.Misestimate)
	return w
}
