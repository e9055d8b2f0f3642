package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/sim/phoenix"
)

const simPhoenixLong = `Simulate one-slot workers with reservation queues, discrete event by event:
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
  allot sim phoenix --experiment a1 --seeds 3`

// simPhoenixOptions are a run's configuration and the flags that choose
// what to run and how to print it.
type simPhoenixOptions struct {
	cfg                 phoenix.Config
	compare, experiment string
	seeds               int
	asJSON, progress    bool
}

func simPhoenixCommand() *cobra.Command {
	o := &simPhoenixOptions{cfg: phoenix.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "phoenix",
		Short: "Simulate constraint-aware hybrid schedulers (Phoenix and its baselines)",
		Long:  simPhoenixLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	return cmd
}

func (o *simPhoenixOptions) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.cfg.Trace, "trace", o.cfg.Trace, "google, cloudera or yahoo")
	fl.StringVar(&o.cfg.Scheduler, "scheduler", o.cfg.Scheduler, "hawk-c, eagle-c, yaq-d, phoenix or eagle")
	fl.StringVar(&o.compare, "compare", "", "comma-separated schedulers to run on the same traces; factors are against the first")
	fl.StringVar(&o.experiment, "experiment", "", "run an acceptance experiment: a0, a1, a2, a3 or a4")
	fl.IntVar(&o.seeds, "seeds", 1, "with --compare or --experiment: run this many seeds from --seed on and report medians")
	fl.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "seed of the trace, the cluster and every random draw")
	fl.IntVar(&o.cfg.Workers, "workers", o.cfg.Workers, "one-slot workers")
	fl.IntVar(&o.cfg.Jobs, "jobs", o.cfg.Jobs, "jobs in the trace")
	fl.Float64Var(&o.cfg.Load, "load", o.cfg.Load, "offered work over capacity (0: the trace's default)")
	fl.Float64Var(&o.cfg.Constrained, "constrained", o.cfg.Constrained, "share of jobs with constraints (negative: the trace's default)")
	fl.BoolVar(&o.cfg.NoReorder, "no-reorder", false, "phoenix: no CRV-based queue reordering")
	fl.BoolVar(&o.cfg.NoNegotiate, "no-negotiate", false, "phoenix: no soft-constraint negotiation")
	fl.BoolVar(&o.cfg.NoPrefer, "no-prefer", false, "phoenix: do not probe workers satisfying relaxed constraints first")
	fl.BoolVar(&o.cfg.NoPartition, "no-partition", false, "phoenix: keep Eagle's short-only partition instead of shaping it by short demand")
	fl.BoolVar(&o.cfg.CRVSampling, "crv-sampling", false, "phoenix: probes of jobs needing no contended class avoid workers that supply one (off in the spec's defaults)")
	fl.BoolVar(&o.cfg.Weighted, "weighted", false, "phoenix: order queues in CRV mode by remaining work minus class wait (ORDER = WEIGHTED) instead of contended first")
	fl.Float64Var(&o.cfg.SoftPenalty, "soft-penalty", o.cfg.SoftPenalty, "phoenix: runtime multiplier on a worker that misses a relaxed soft constraint")
	fl.BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	fl.BoolVar(&o.progress, "progress", false, "draw a progress bar on stderr")
}

// run draws the progress bar, if asked, on errOut.
func (o *simPhoenixOptions) run(out, errOut io.Writer) error {
	r := &phoenix.Runner{}
	if o.progress {
		r.Progress = phoenixProgress(errOut)
	}
	if o.seeds < 1 {
		return fmt.Errorf("--seeds %d: want at least 1", o.seeds)
	}
	seeds := seedRange(o.cfg.Seed, o.seeds)
	switch {
	case o.experiment != "":
		return o.runExperiment(out, r, seeds)
	case o.compare == "":
		return o.runOne(out)
	}
	c, err := phoenix.Compare(r, o.cfg, strings.Split(o.compare, ","), seeds)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(out, c)
	}
	return phoenix.WriteComparison(out, c)
}

// runOne runs the one configured scheduler.
func (o *simPhoenixOptions) runOne(out io.Writer) error {
	if o.seeds != 1 {
		return fmt.Errorf("--seeds needs --compare or --experiment")
	}
	res, err := phoenix.Run(o.cfg)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(out, res)
	}
	return phoenix.WriteRun(out, res)
}

func (o *simPhoenixOptions) runExperiment(out io.Writer, r *phoenix.Runner, seeds []uint64) error {
	if o.compare != "" {
		return fmt.Errorf("--experiment and --compare do not mix")
	}
	ex, err := phoenix.RunExperiment(r, strings.ToLower(o.experiment), o.cfg, seeds)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(out, ex)
	}
	return phoenix.WriteExperiment(out, ex)
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
