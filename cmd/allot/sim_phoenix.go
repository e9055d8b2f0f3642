package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/sim"
)

func simPhoenixCommand() *cobra.Command {
	cfg := sim.DefaultPhoenixConfig()
	var compare, experiment string
	var seeds int
	var asJSON, progress bool
	cmd := &cobra.Command{
		Use:   "phoenix",
		Short: "Simulate constraint-aware hybrid schedulers (Phoenix and its baselines)",
		Long: `Simulate one-slot workers with reservation queues, discrete event by event:
long jobs placed centrally by least work left on a big partition, short jobs
by batch probing with late binding, constraints evaluated as the master and
agents evaluate them (protocol), and the CRV kept with the allocator's class
bookkeeping (offers).

Traces (synthetic, seeded): google, cloudera, yahoo.

Schedulers:
  hawk-c   Hawk: FIFO queues, stealing, 2 probes minimum; constraint filtering
  eagle-c  Eagle: SRPT with the CAP=5 guard, succinct state sharing, sticky
           batch probing; constraint filtering
  yaq-d    distributed: probing for every job, SRPT with the guard, bounded
           queues; constraint filtering
  phoenix  Eagle-C plus CRV-based queue reordering, the M/G/1 wait estimate
           and soft-constraint negotiation at admission
  eagle    Eagle with every constraint ignored (the unconstrained baseline)

One run prints p50/p90/p99 job response times of short, long, constrained
and unconstrained jobs. --compare runs several schedulers on the same traces
and prints factors against the first (its time over theirs: above 1 is
faster); --seeds N runs seeds --seed .. --seed+N-1 and reports medians.
--experiment a0..a4 runs an acceptance experiment of the Phoenix spec
(docs/phoenix.md, "Simulator", has the results).

Examples:
  allot sim phoenix --trace yahoo --scheduler phoenix
  allot sim phoenix --trace google --compare eagle-c,phoenix,hawk-c --seeds 3
  allot sim phoenix --experiment a1 --seeds 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			r := &sim.PhoenixRunner{}
			if progress {
				r.Progress = phoenixProgress(cmd.ErrOrStderr())
			}
			if seeds < 1 {
				return fmt.Errorf("--seeds %d: want at least 1", seeds)
			}
			var seedList []uint64
			for i := range seeds {
				seedList = append(seedList, cfg.Seed+uint64(i))
			}
			if experiment != "" {
				if compare != "" {
					return fmt.Errorf("--experiment and --compare do not mix")
				}
				ex, err := sim.RunPhoenixExperiment(r, strings.ToLower(experiment), cfg, seedList)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, ex)
				}
				return sim.WritePhoenixExperiment(out, ex)
			}
			if compare == "" {
				if seeds != 1 {
					return fmt.Errorf("--seeds needs --compare or --experiment")
				}
				res, err := sim.RunPhoenix(cfg)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, res)
				}
				return sim.WritePhoenixRun(out, res)
			}
			c, err := sim.ComparePhoenix(r, cfg, strings.Split(compare, ","), seedList)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, c)
			}
			return sim.WritePhoenixComparison(out, c)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Trace, "trace", cfg.Trace, "google, cloudera or yahoo")
	fl.StringVar(&cfg.Scheduler, "scheduler", cfg.Scheduler, "hawk-c, eagle-c, yaq-d, phoenix or eagle")
	fl.StringVar(&compare, "compare", "", "comma-separated schedulers to run on the same traces; factors are against the first")
	fl.StringVar(&experiment, "experiment", "", "run an acceptance experiment: a0, a1, a2, a3 or a4")
	fl.IntVar(&seeds, "seeds", 1, "with --compare or --experiment: run this many seeds from --seed on and report medians")
	fl.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the trace, the cluster and every random draw")
	fl.IntVar(&cfg.Workers, "workers", cfg.Workers, "one-slot workers")
	fl.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "jobs in the trace")
	fl.Float64Var(&cfg.Load, "load", cfg.Load, "offered work over capacity (0: the trace's default)")
	fl.Float64Var(&cfg.Constrained, "constrained", cfg.Constrained, "share of jobs with constraints (negative: the trace's default)")
	fl.BoolVar(&cfg.NoReorder, "no-reorder", false, "phoenix: no CRV-based queue reordering")
	fl.BoolVar(&cfg.NoNegotiate, "no-negotiate", false, "phoenix: no soft-constraint negotiation")
	fl.BoolVar(&cfg.NoPrefer, "no-prefer", false, "phoenix: do not probe workers satisfying relaxed constraints first")
	fl.BoolVar(&cfg.NoPartition, "no-partition", false, "phoenix: keep Eagle's short-only partition instead of shaping it by short demand")
	fl.BoolVar(&cfg.CRVSampling, "crv-sampling", false, "phoenix: probes of jobs needing no contended class avoid workers that supply one (off in the spec's defaults)")
	fl.BoolVar(&cfg.Weighted, "weighted", false, "phoenix: order queues in CRV mode by remaining work minus class wait (ORDER = WEIGHTED) instead of contended first")
	fl.Float64Var(&cfg.SoftPenalty, "soft-penalty", cfg.SoftPenalty, "phoenix: runtime multiplier on a worker that misses a relaxed soft constraint")
	fl.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	fl.BoolVar(&progress, "progress", false, "draw a progress bar on stderr")
	return cmd
}

// phoenixProgress returns a callback that redraws a bar of runs done on w.
func phoenixProgress(w io.Writer) func(done, total int) {
	return func(done, total int) {
		const width = 30
		n := width * done / max(total, 1)
		fmt.Fprintf(w, "\r[%s%s] %d/%d runs", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}
