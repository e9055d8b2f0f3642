package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/sim/carbyne"
)

const simCarbyneLong = `Simulate a cluster running DAG jobs, discrete event by event, through the
allocator the master runs (offers) and the job planner frameworks run
(framework/altruism).

Workloads:
  fig2    the Carbyne paper's Figure 2: two jobs on one machine
  tpcds   synthetic TPC-DS-shaped DAGs (median 8 stages, 1-4 barriers) on
          machines of 20 cores and 128 GB, drawn from --seed

Schedulers:
  drf      strict DRF: each job held to its share, breadth-first
  drf-wc   work-conserving DRF, breadth-first
  tetris   packing across jobs (Tetris, f = 0)
  sjf      shortest remaining critical path first
  carbyne  DRF shares, altruistic jobs, leftover shortest remaining work first

One run prints each job's completion time (JCT), the average and 95th
percentile JCT, the makespan, Jain's fairness index over 60 s windows and
the leftover pool of the first round. --compare runs several schedulers on
the same workloads and prints factors against the first (its time over
theirs, above 1 is faster) and the fraction of jobs each one speeds up or
slows down; --seeds N runs seeds --seed .. --seed+N-1 and reports medians.
--sweep KNOB=V1,V2,... repeats the comparison for each value of altruism,
greedy, misestimate or load.

Examples (docs/carbyne.md, "Simulator", has their results):
  allot sim carbyne --workload fig2 --scheduler drf
  allot sim carbyne --arrivals offline --compare drf,carbyne,drf-wc,tetris,sjf --seeds 3
  allot sim carbyne --compare drf,carbyne,drf-wc,tetris,sjf --seeds 3
  allot sim carbyne --compare drf,carbyne --seeds 3 --deciles
  allot sim carbyne --compare drf,drf-wc,tetris,carbyne --sweep altruism=0,0.25,0.5,0.75,1 --seeds 3`

// simCarbyneOptions are a run's configuration and the flags that choose
// what to run and how to print it.
type simCarbyneOptions struct {
	cfg                      carbyne.Config
	arrivals, compare, sweep string
	seeds                    int
	asJSON, deciles          bool
}

func simCarbyneCommand() *cobra.Command {
	o := &simCarbyneOptions{cfg: carbyne.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "carbyne",
		Short: "Simulate DAG jobs under Carbyne and its baselines",
		Long:  simCarbyneLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.run(cmd.OutOrStdout()) },
	}
	o.addFlags(cmd)
	return cmd
}

func (o *simCarbyneOptions) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.cfg.Workload, "workload", o.cfg.Workload, "fig2 or tpcds")
	fl.StringVar(&o.cfg.Scheduler, "scheduler", o.cfg.Scheduler, "drf, drf-wc, tetris, sjf or carbyne")
	fl.StringVar(&o.compare, "compare", "", "comma-separated schedulers to run on the same workloads; factors are against the first")
	fl.StringVar(&o.sweep, "sweep", "", "KNOB=V1,V2,...: repeat --compare for each value of altruism, greedy, misestimate or load")
	fl.IntVar(&o.seeds, "seeds", 1, "with --compare: run this many seeds from --seed on and report medians")
	fl.BoolVar(&o.deciles, "deciles", false, "with --compare: print each scheduler's per-job factor deciles")
	fl.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "seed of the tpcds workload and of every random draw")
	fl.IntVar(&o.cfg.Jobs, "jobs", o.cfg.Jobs, "tpcds: number of jobs")
	fl.IntVar(&o.cfg.Machines, "machines", o.cfg.Machines, "tpcds: machines at load 1")
	fl.Float64Var(&o.cfg.Load, "load", o.cfg.Load, "tpcds: load factor; the cluster has machines/load machines (2: half)")
	fl.StringVar(&o.arrivals, "arrivals", "online", "tpcds: online (Poisson) or offline (every job at t=0)")
	fl.DurationVar(&o.cfg.MeanArrival, "mean-arrival", o.cfg.MeanArrival, "tpcds: mean time between online arrivals")
	fl.Float64Var(&o.cfg.Altruism, "altruism", o.cfg.Altruism, "P(altruism) of carbyne's jobs, 0 to 1")
	fl.Float64Var(&o.cfg.Misestimate, "misestimate", o.cfg.Misestimate, "X percent: carbyne's planner and sjf see demands and durations (1+X/100) times the true ones")
	fl.Float64Var(&o.cfg.Greedy, "greedy", o.cfg.Greedy, "fraction of jobs that are never altruistic, 0 to 1")
	fl.StringVar(&o.cfg.ShareCap, "share-cap", carbyne.ShareCapRemaining, "what caps a job's fair share: remaining (every unfinished task of its DAG) or runnable (its running and runnable tasks)")
	fl.DurationVar(&o.cfg.ShareInterval, "share-interval", o.cfg.ShareInterval, "recompute fair shares once this long has passed since the last time, and on every arrival and completion (0: every round)")
	fl.BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
}

func (o *simCarbyneOptions) run(out io.Writer) error {
	switch o.arrivals {
	case "online":
		o.cfg.Offline = false
	case "offline":
		o.cfg.Offline = true
	default:
		return fmt.Errorf("--arrivals %q: want online or offline", o.arrivals)
	}
	if o.compare == "" {
		return o.runOne(out)
	}
	return o.runCompare(out)
}

// runOne runs the one configured scheduler.
func (o *simCarbyneOptions) runOne(out io.Writer) error {
	if o.sweep != "" {
		return fmt.Errorf("--sweep needs --compare")
	}
	if o.seeds != 1 {
		return fmt.Errorf("--seeds needs --compare")
	}
	res, err := carbyne.Run(o.cfg)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(out, res)
	}
	return carbyne.WriteRun(out, res)
}

// runCompare runs the --compare schedulers over the seeds, once or for
// each value of the --sweep knob.
func (o *simCarbyneOptions) runCompare(out io.Writer) error {
	if o.seeds < 1 {
		return fmt.Errorf("--seeds %d: want at least 1", o.seeds)
	}
	schedulers := strings.Split(o.compare, ",")
	seeds := seedRange(o.cfg.Seed, o.seeds)
	knob, values, err := parseSweep(o.sweep)
	if err != nil {
		return err
	}
	var cs []carbyne.Comparison
	if knob == "" {
		c, err := carbyne.Compare(o.cfg, schedulers, seeds)
		if err != nil {
			return err
		}
		cs = append(cs, c)
	} else if cs, err = carbyne.Sweep(o.cfg, schedulers, seeds, knob, values); err != nil {
		return err
	}
	if o.asJSON {
		if knob == "" {
			return writeJSON(out, cs[0])
		}
		return writeJSON(out, cs)
	}
	return carbyne.WriteComparison(out, cs, o.deciles)
}
