package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/sim"
)

func simCoflowCommand() *cobra.Command {
	cfg := sim.DefaultCoflowSimConfig()
	synth := sim.DefaultSynthOptions()
	var tracePath, compare, sweep, policy, writeTrace string
	var firstQueueMB, gbps, skew float64
	var wide, replicate, synthetic, first int
	var mantri uint64
	var asJSON, invert bool
	cmd := &cobra.Command{
		Use:   "coflow",
		Short: "Simulate coflow scheduling (Philae and its baselines) on a Coflow-Benchmark trace",
		Long: `Replay a Coflow-Benchmark trace on a non-blocking fabric, flow by flow, through
the coordinator the master runs (package coflow). Every port has an egress and
an ingress side of --gbps; rates stay constant between events (arrivals, flow
completions, slot boundaries, aalo's byte reports every --slot), unless
--quantum mimics a slotted simulator. Each reducer's megabytes are spread
evenly over the coflow's mappers.

Policies: philae (ordering --philae-policy), philae-A .. philae-D, aalo,
aalo-oracle, sebf (Varys: smallest bottleneck first, MADD rates), scf, fifo
(coflows in arrival order, MADD rates), fair (per-flow max-min fair sharing
over the port sides) and fair-split (the reference simulator's FAIR: each
port side split equally among its flows, nothing redistributed).

One run prints the CCT statistics (with --json every coflow's CCT). --compare
runs several policies on the same trace and prints factors against the first:
the first's speedup over each (ratio of average CCTs, and per-coflow P50/P90),
or with --invert each one's speedup over the first. --sweep KNOB=V1,V2,...
repeats the comparison for pilot-fraction, thin-limit, first-queue-mb,
queue-growth or skew (keep coflows whose largest flow is more than V times
their smallest).

Derived traces: --first N, --skew K, --wide T, --mantri SEED, --replicate N; --synthetic N
draws N coflows from the trace's coflows onto --ports ports (Poisson arrivals).

Examples (docs/coflow.md has their results):
  allot sim coflow --trace sim/testdata/FB2010-1Hr-150-0.txt --compare philae,aalo,sebf,scf,fifo,fair
  allot sim coflow --trace sim/testdata/FB2010-1Hr-150-0.txt --compare aalo,philae-D,philae-A,philae-B,philae-C --invert
  allot sim coflow --trace sim/testdata/FB2010-1Hr-150-0.txt --compare aalo,philae --invert --sweep skew=1,2,3,4,5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tracePath == "" {
				return fmt.Errorf("--trace is required")
			}
			tr, err := readCoflowTrace(tracePath)
			if err != nil {
				return err
			}
			if first > 0 && first < len(tr.Coflows) {
				tr.Coflows = tr.Coflows[:first]
			}
			if tr, err = deriveTrace(tr, skew, wide, mantri, replicate, synthetic, synth); err != nil {
				return err
			}
			if writeTrace != "" {
				return writeCoflowTrace(writeTrace, tr)
			}
			cfg.Coflow.FirstQueueLimit = firstQueueMB * sim.MB
			cfg.Coflow.Capacity = gbps * 1e9 / 8
			cfg.Coflow.Policy = coflow.Policy(policy)
			out := cmd.OutOrStdout()
			if compare == "" {
				if sweep != "" {
					return fmt.Errorf("--sweep needs --compare")
				}
				res, err := sim.RunCoflowSim(tr, cfg)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, res)
				}
				return sim.WriteCoflowRun(out, res)
			}
			policies := strings.Split(compare, ",")
			knob, values, err := parseSweep(sweep)
			if err != nil {
				return err
			}
			var cs []sim.CoflowComparison
			if knob == "" {
				c, err := sim.CompareCoflow(tr, cfg, policies, invert)
				if err != nil {
					return err
				}
				cs = append(cs, c)
			} else if cs, err = sim.SweepCoflow(tr, cfg, policies, invert, knob, values); err != nil {
				return err
			}
			if asJSON {
				if knob == "" {
					return writeJSON(out, cs[0])
				}
				return writeJSON(out, cs)
			}
			return sim.WriteCoflowComparison(out, cs)
		},
	}
	def := cfg.Coflow
	fl := cmd.Flags()
	fl.StringVar(&tracePath, "trace", "", "Coflow-Benchmark trace file, or - for stdin")
	fl.StringVar(&cfg.Policy, "policy", cfg.Policy, "policy: "+strings.Join(sim.CoflowPolicies(), ", "))
	fl.StringVar(&compare, "compare", "", "comma-separated policies to run on the same trace; factors are against the first")
	fl.BoolVar(&invert, "invert", false, "with --compare: factors are each policy's speedup over the first")
	fl.StringVar(&sweep, "sweep", "", "KNOB=V1,V2,...: repeat --compare for each value of "+strings.Join(sim.CoflowSweepKnobs(), ", "))
	fl.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	fl.StringVar(&policy, "philae-policy", string(def.Policy), "philae's ordering: A (size), B (remaining size), C (contention), D (length-weighted port contention)")
	fl.Float64Var(&cfg.Coflow.PilotFraction, "pilot-fraction", def.PilotFraction, "pilots per wide coflow as a fraction of its senders (at least one)")
	fl.IntVar(&cfg.Coflow.ThinLimit, "thin-limit", def.ThinLimit, "coflows of at most this many flows are not piloted")
	fl.BoolVar(&cfg.Coflow.WorkConserving, "work-conserving", def.WorkConserving, "let piloting coflows' other flows use idle ports")
	fl.BoolVar(&cfg.Coflow.ContentionIncludesSelf, "contention-includes-self", def.ContentionIncludesSelf, "policy D counts the coflow itself in each port's contention")
	fl.IntVar(&cfg.Coflow.Queues, "queues", def.Queues, "number of main priority queues (K)")
	fl.Float64Var(&firstQueueMB, "first-queue-mb", def.FirstQueueLimit/sim.MB, "upper threshold of the first queue in MB (Q_hi_0)")
	fl.Float64Var(&cfg.Coflow.QueueGrowth, "queue-growth", def.QueueGrowth, "threshold growth factor between queues (E)")
	fl.IntVar(&cfg.Coflow.SlotsPerRound, "slots-per-round", def.SlotsPerRound, "slots of one weighted round across queues (W)")
	fl.Float64Var(&cfg.Coflow.WeightRatio, "weight-ratio", def.WeightRatio, "weight ratio between adjacent queues (w)")
	fl.DurationVar(&cfg.Coflow.Slot, "slot", def.Slot, "slot length δ: the weighted rotation's slot and aalo's report interval")
	fl.Float64Var(&gbps, "gbps", def.Capacity*8/1e9, "capacity of every port's egress and ingress in Gbit/s")
	fl.DurationVar(&cfg.Quantum, "quantum", 0, "recompute rates only at multiples of this (mimics the paper's slotted simulator); 0: event-driven")
	fl.IntVar(&first, "first", 0, "keep only the first N coflows by arrival (0: all)")
	fl.Float64Var(&skew, "skew", 0, "keep only coflows whose largest flow is more than K times their smallest (0: all)")
	fl.IntVar(&wide, "wide", -1, "keep only coflows of more than T flows (-1: all)")
	fl.Uint64Var(&mantri, "mantri", 0, "give mappers Mantri-like skew drawn from this seed (0: none)")
	fl.IntVar(&replicate, "replicate", 1, "copy every coflow N times onto N copies of the fabric (6: the paper's 900 ports)")
	fl.IntVar(&synthetic, "synthetic", 0, "draw N coflows from the trace onto --ports ports with Poisson arrivals (0: replay the trace)")
	fl.IntVar(&synth.Ports, "ports", synth.Ports, "--synthetic: ports of the fabric")
	fl.Float64Var(&synth.Load, "load", synth.Load, "--synthetic: arrival rate over FB2010's (one coflow per 6.9 s)")
	fl.Uint64Var(&synth.Seed, "seed", synth.Seed, "--synthetic: seed")
	fl.StringVar(&writeTrace, "write-trace", "", "write the (derived) trace to this file instead of simulating")
	return cmd
}

func readCoflowTrace(path string) (*sim.CoflowTrace, error) {
	if path == "-" {
		return sim.ParseCoflowTrace(os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return sim.ParseCoflowTrace(f)
}

func writeCoflowTrace(path string, tr *sim.CoflowTrace) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := sim.WriteCoflowTrace(f, tr); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// deriveTrace applies the derived-trace flags in a fixed order: synthetic,
// skew filter, wide filter, Mantri-like skew, replication.
func deriveTrace(tr *sim.CoflowTrace, skew float64, wide int, mantri uint64, replicate, synthetic int,
	o sim.SynthOptions) (*sim.CoflowTrace, error) {
	if synthetic > 0 {
		o.Coflows = synthetic
		var err error
		if tr, err = sim.SynthesizeCoflows(tr, o); err != nil {
			return nil, err
		}
	}
	if skew > 0 {
		tr = sim.FilterSkew(tr, skew)
	}
	if wide >= 0 {
		tr = sim.WideOnly(tr, wide)
	}
	if mantri != 0 {
		tr = sim.MantriLike(tr, mantri)
	}
	if replicate < 1 {
		return nil, fmt.Errorf("--replicate %d: want at least 1", replicate)
	}
	if replicate > 1 {
		tr = sim.Replicate(tr, replicate)
	}
	if len(tr.Coflows) == 0 {
		return nil, fmt.Errorf("the trace has no coflow left to simulate")
	}
	return tr, nil
}
