package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/sim"
)

func simCarbyneCommand() *cobra.Command {
	cfg := sim.DefaultCarbyneConfig()
	var arrivals, compare, sweep string
	var seeds int
	var asJSON, deciles bool
	cmd := &cobra.Command{
		Use:   "carbyne",
		Short: "Simulate DAG jobs under Carbyne and its baselines",
		Long: `Simulate a cluster running DAG jobs, discrete event by event, through the
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
  allot sim carbyne --compare drf,drf-wc,tetris,carbyne --sweep altruism=0,0.25,0.5,0.75,1 --seeds 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch arrivals {
			case "online":
				cfg.Offline = false
			case "offline":
				cfg.Offline = true
			default:
				return fmt.Errorf("--arrivals %q: want online or offline", arrivals)
			}
			out := cmd.OutOrStdout()
			if compare == "" {
				if sweep != "" {
					return fmt.Errorf("--sweep needs --compare")
				}
				if seeds != 1 {
					return fmt.Errorf("--seeds needs --compare")
				}
				res, err := sim.RunCarbyne(cfg)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, res)
				}
				return sim.WriteCarbyneRun(out, res)
			}
			if seeds < 1 {
				return fmt.Errorf("--seeds %d: want at least 1", seeds)
			}
			schedulers := strings.Split(compare, ",")
			var seedList []uint64
			for i := range seeds {
				seedList = append(seedList, cfg.Seed+uint64(i))
			}
			knob, values, err := parseSweep(sweep)
			if err != nil {
				return err
			}
			cs, err := sim.SweepCarbyne(cfg, schedulers, seedList, knob, values)
			if err != nil {
				return err
			}
			if asJSON {
				if knob == "" {
					return writeJSON(out, cs[0])
				}
				return writeJSON(out, cs)
			}
			return sim.WriteCarbyneComparison(out, cs, deciles)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Workload, "workload", cfg.Workload, "fig2 or tpcds")
	fl.StringVar(&cfg.Scheduler, "scheduler", cfg.Scheduler, "drf, drf-wc, tetris, sjf or carbyne")
	fl.StringVar(&compare, "compare", "", "comma-separated schedulers to run on the same workloads; factors are against the first")
	fl.StringVar(&sweep, "sweep", "", "KNOB=V1,V2,...: repeat --compare for each value of altruism, greedy, misestimate or load")
	fl.IntVar(&seeds, "seeds", 1, "with --compare: run this many seeds from --seed on and report medians")
	fl.BoolVar(&deciles, "deciles", false, "with --compare: print each scheduler's per-job factor deciles")
	fl.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the tpcds workload and of every random draw")
	fl.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "tpcds: number of jobs")
	fl.IntVar(&cfg.Machines, "machines", cfg.Machines, "tpcds: machines at load 1")
	fl.Float64Var(&cfg.Load, "load", cfg.Load, "tpcds: load factor; the cluster has machines/load machines (2: half)")
	fl.StringVar(&arrivals, "arrivals", "online", "tpcds: online (Poisson) or offline (every job at t=0)")
	fl.DurationVar(&cfg.MeanArrival, "mean-arrival", cfg.MeanArrival, "tpcds: mean time between online arrivals")
	fl.Float64Var(&cfg.Altruism, "altruism", cfg.Altruism, "P(altruism) of carbyne's jobs, 0 to 1")
	fl.Float64Var(&cfg.Misestimate, "misestimate", cfg.Misestimate, "X percent: carbyne's planner and sjf see demands and durations (1+X/100) times the true ones")
	fl.Float64Var(&cfg.Greedy, "greedy", cfg.Greedy, "fraction of jobs that are never altruistic, 0 to 1")
	fl.StringVar(&cfg.ShareCap, "share-cap", sim.ShareCapRemaining, "what caps a job's fair share: remaining (every unfinished task of its DAG) or runnable (its running and runnable tasks)")
	fl.DurationVar(&cfg.ShareInterval, "share-interval", cfg.ShareInterval, "recompute fair shares once this long has passed since the last time, and on every arrival and completion (0: every round)")
	fl.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// parseSweep splits KNOB=V1,V2,... ("" for no sweep).
func parseSweep(s string) (string, []float64, error) {
	if s == "" {
		return "", nil, nil
	}
	knob, list, ok := strings.Cut(s, "=")
	if !ok || list == "" {
		return "", nil, fmt.Errorf("--sweep %q: want KNOB=V1,V2 and so on", s)
	}
	var values []float64
	for _, v := range strings.Split(list, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return "", nil, fmt.Errorf("--sweep %q: %q is not a number", s, v)
		}
		values = append(values, x)
	}
	return knob, values, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
