package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/coflow"
	"github.com/allot-project/allot/sim/coflowsim"
)

const simCoflowLong = `Replay a Coflow-Benchmark trace on a non-blocking fabric, flow by flow, through
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
draws N coflows from the trace's coflows onto --ports ports (Poisson arrivals); --fold N
maps the ports onto N (port mod N, a coflow's flows between two ports merged), with
--fold-bytes and --fold-time scaling every size and arrival, for a testbed of N agents.

Examples (docs/coflow.md has their results):
  allot sim coflow --trace sim/coflowsim/testdata/FB2010-1Hr-150-0.txt --compare philae,aalo,sebf,scf,fifo,fair
  allot sim coflow --trace sim/coflowsim/testdata/FB2010-1Hr-150-0.txt --compare aalo,philae-D,philae-A,philae-B,philae-C --invert
  allot sim coflow --trace sim/coflowsim/testdata/FB2010-1Hr-150-0.txt --compare aalo,philae --invert --sweep skew=1,2,3,4,5`

// simCoflowOptions are a run's configuration, the flags that derive the
// trace it replays and those that choose what to run and how to print it.
type simCoflowOptions struct {
	cfg                                           coflowsim.Config
	synth                                         coflowsim.SynthOptions
	tracePath, compare, sweep, policy, writeTrace string
	firstQueueMB, gbps, skew, foldBytes, foldTime float64
	wide, replicate, synthetic, first, fold       int
	mantri                                        uint64
	asJSON, invert, egressOnly                    bool
}

func simCoflowCommand() *cobra.Command {
	o := &simCoflowOptions{cfg: coflowsim.DefaultConfig(), synth: coflowsim.DefaultSynthOptions()}
	cmd := &cobra.Command{
		Use:   "coflow",
		Short: "Simulate coflow scheduling (Philae and its baselines) on a Coflow-Benchmark trace",
		Long:  simCoflowLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	return cmd
}

func (o *simCoflowOptions) addFlags(cmd *cobra.Command) {
	def := o.cfg.Coflow
	fl := cmd.Flags()
	fl.StringVar(&o.tracePath, "trace", "", "Coflow-Benchmark trace file, or - for stdin")
	fl.StringVar(&o.cfg.Policy, "policy", o.cfg.Policy, "policy: "+strings.Join(coflowsim.Policies(), ", "))
	fl.StringVar(&o.compare, "compare", "", "comma-separated policies to run on the same trace; factors are against the first")
	fl.BoolVar(&o.invert, "invert", false, "with --compare: factors are each policy's speedup over the first")
	fl.StringVar(&o.sweep, "sweep", "", "KNOB=V1,V2,...: repeat --compare for each value of "+strings.Join(coflowsim.SweepKnobs(), ", "))
	fl.BoolVar(&o.asJSON, "json", false, "print JSON instead of a table")
	fl.StringVar(&o.policy, "philae-policy", string(def.Policy), "philae's ordering: A (size), B (remaining size), C (contention), D (length-weighted port contention)")
	fl.Float64Var(&o.cfg.Coflow.PilotFraction, "pilot-fraction", def.PilotFraction, "pilots per wide coflow as a fraction of its senders (at least one)")
	fl.IntVar(&o.cfg.Coflow.ThinLimit, "thin-limit", def.ThinLimit, "coflows of at most this many flows are not piloted")
	fl.BoolVar(&o.cfg.Coflow.WorkConserving, "work-conserving", def.WorkConserving, "let piloting coflows' other flows use idle ports")
	fl.BoolVar(&o.cfg.Coflow.QueueFIFO, "queue-fifo", def.QueueFIFO, "philae serves a main queue in order of entry (the paper) instead of smallest metric first")
	fl.BoolVar(&o.cfg.Coflow.ContentionIncludesSelf, "contention-includes-self", def.ContentionIncludesSelf, "policy D counts the coflow itself in each port's contention")
	fl.IntVar(&o.cfg.Coflow.Queues, "queues", def.Queues, "number of main priority queues (K)")
	fl.Float64Var(&o.firstQueueMB, "first-queue-mb", def.FirstQueueLimit/coflowsim.MB, "upper threshold of the first queue in MB (Q_hi_0)")
	fl.Float64Var(&o.cfg.Coflow.QueueGrowth, "queue-growth", def.QueueGrowth, "threshold growth factor between queues (E)")
	fl.IntVar(&o.cfg.Coflow.SlotsPerRound, "slots-per-round", def.SlotsPerRound, "slots of one weighted round across queues (W)")
	fl.Float64Var(&o.cfg.Coflow.WeightRatio, "weight-ratio", def.WeightRatio, "weight ratio between adjacent queues (w)")
	fl.DurationVar(&o.cfg.Coflow.Slot, "slot", def.Slot, "slot length δ: the weighted rotation's slot and aalo's report interval")
	fl.Float64Var(&o.gbps, "gbps", def.Capacity*8/1e9, "capacity of every port's egress and ingress in Gbit/s")
	fl.DurationVar(&o.cfg.Quantum, "quantum", 0, "recompute rates only at multiples of this (mimics the paper's slotted simulator); 0: event-driven")
	fl.IntVar(&o.first, "first", 0, "keep only the first N coflows by arrival (0: all)")
	fl.Float64Var(&o.skew, "skew", 0, "keep only coflows whose largest flow is more than K times their smallest (0: all)")
	fl.IntVar(&o.wide, "wide", -1, "keep only coflows of more than T flows (-1: all)")
	fl.Uint64Var(&o.mantri, "mantri", 0, "give mappers Mantri-like skew drawn from this seed (0: none)")
	fl.IntVar(&o.replicate, "replicate", 1, "copy every coflow N times onto N copies of the fabric (6: the paper's 900 ports)")
	fl.IntVar(&o.synthetic, "synthetic", 0, "draw N coflows from the trace onto --ports ports with Poisson arrivals (0: replay the trace)")
	fl.IntVar(&o.synth.Ports, "ports", o.synth.Ports, "--synthetic: ports of the fabric")
	fl.Float64Var(&o.synth.Load, "load", o.synth.Load, "--synthetic: arrival rate over FB2010's (one coflow per 6.9 s)")
	fl.Uint64Var(&o.synth.Seed, "seed", o.synth.Seed, "--synthetic: seed")
	fl.IntVar(&o.fold, "fold", 0, "map the ports onto N (port mod N, a coflow's flows between two ports merged), last of the derivations (0: none)")
	fl.Float64Var(&o.foldBytes, "fold-bytes", 1, "with --fold: multiply every flow's bytes by this")
	fl.Float64Var(&o.foldTime, "fold-time", 1, "with --fold: multiply every arrival by this")
	fl.BoolVar(&o.cfg.OrderOnly, "order-only", false, "drop sebf's and fifo's rate caps: flows go in the decision's order at what their ports have left, as allot's agents serve it")
	fl.BoolVar(&o.egressOnly, "egress-only", false, "give every flow a receiving port of its own: only the senders' ports are shared (allot bench coflow's fabric)")
	fl.StringVar(&o.writeTrace, "write-trace", "", "write the (derived) trace to this file instead of simulating")
}

func (o *simCoflowOptions) run(stdin io.Reader, out io.Writer) error {
	tr, err := o.trace(stdin)
	if err != nil {
		return err
	}
	if o.writeTrace != "" {
		return writeCoflowTrace(o.writeTrace, tr)
	}
	o.cfg.Coflow.FirstQueueLimit = o.firstQueueMB * coflowsim.MB
	o.cfg.Coflow.Capacity = o.gbps * 1e9 / 8
	o.cfg.Coflow.Policy = coflow.Policy(o.policy)
	if o.compare == "" {
		return o.runOne(out, tr)
	}
	return o.runCompare(out, tr)
}

// runOne replays the trace under the one configured policy.
func (o *simCoflowOptions) runOne(out io.Writer, tr *coflowsim.Trace) error {
	if o.sweep != "" {
		return fmt.Errorf("--sweep needs --compare")
	}
	res, err := coflowsim.Run(tr, o.cfg)
	if err != nil {
		return err
	}
	if o.asJSON {
		return writeJSON(out, res)
	}
	return coflowsim.WriteRun(out, res)
}

// runCompare replays the trace under the --compare policies, once or for
// each value of the --sweep knob.
func (o *simCoflowOptions) runCompare(out io.Writer, tr *coflowsim.Trace) error {
	policies := strings.Split(o.compare, ",")
	knob, values, err := parseSweep(o.sweep)
	if err != nil {
		return err
	}
	var cs []coflowsim.Comparison
	if knob == "" {
		c, err := coflowsim.Compare(tr, o.cfg, policies, o.invert)
		if err != nil {
			return err
		}
		cs = append(cs, c)
	} else if cs, err = coflowsim.Sweep(tr, o.cfg, policies, o.invert, knob, values); err != nil {
		return err
	}
	if o.asJSON {
		if knob == "" {
			return writeJSON(out, cs[0])
		}
		return writeJSON(out, cs)
	}
	return coflowsim.WriteComparison(out, cs)
}

// trace reads --trace (- for stdin) and derives from it the trace the flags
// ask for, in a fixed order: the first coflows, synthetic, skew filter,
// wide filter, Mantri-like skew, replication.
func (o *simCoflowOptions) trace(stdin io.Reader) (*coflowsim.Trace, error) {
	if o.tracePath == "" {
		return nil, fmt.Errorf("--trace is required")
	}
	tr, err := readCoflowTrace(stdin, o.tracePath)
	if err != nil {
		return nil, err
	}
	if o.first > 0 && o.first < len(tr.Coflows) {
		tr.Coflows = tr.Coflows[:o.first]
	}
	if o.synthetic > 0 {
		synth := o.synth
		synth.Coflows = o.synthetic
		if tr, err = coflowsim.Synthesize(tr, synth); err != nil {
			return nil, err
		}
	}
	if o.skew > 0 {
		tr = coflowsim.FilterSkew(tr, o.skew)
	}
	if o.wide >= 0 {
		tr = coflowsim.WideOnly(tr, o.wide)
	}
	if o.mantri != 0 {
		tr = coflowsim.MantriLike(tr, o.mantri)
	}
	if o.replicate < 1 {
		return nil, fmt.Errorf("--replicate %d: want at least 1", o.replicate)
	}
	if o.replicate > 1 {
		tr = coflowsim.Replicate(tr, o.replicate)
	}
	if o.fold > 0 {
		if tr, err = coflowsim.Fold(tr, o.fold, o.foldBytes, o.foldTime); err != nil {
			return nil, err
		}
	}
	if o.egressOnly {
		tr = coflowsim.EgressOnly(tr)
	}
	if len(tr.Coflows) == 0 {
		return nil, fmt.Errorf("the trace has no coflow left to simulate")
	}
	return tr, nil
}

func readCoflowTrace(stdin io.Reader, path string) (*coflowsim.Trace, error) {
	if path == "-" {
		return coflowsim.ParseTrace(stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return coflowsim.ParseTrace(f)
}

func writeCoflowTrace(path string, tr *coflowsim.Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := coflowsim.WriteTrace(f, tr); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
