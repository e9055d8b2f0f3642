package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/internal/coflowbench"
	"github.com/allot-project/allot/sim/coflowsim"
)

// benchCoflowOptions are `allot bench coflow`'s flags.
type benchCoflowOptions struct {
	trace, policies, logLevel, dataDir string
	agents, first, slots               int
	foldBytes, foldTime                float64
	egress, ingress                    byteSize
}

func benchCoflowCommand() *cobra.Command {
	o := benchCoflowOptions{policies: "philae,aalo,fifo," + coflowbench.Uncoordinated, agents: 8, slots: 1024,
		foldBytes: 1.43e-4, foldTime: 0.02, egress: 16 << 20, logLevel: "error"}
	cmd := &cobra.Command{
		Use:   "coflow",
		Short: "Replay a coflow trace as real transfers between agents on this machine, beside the simulator's prediction",
		Long: `For each --policies policy, starts a local cluster (one master, --agents agents whose shuffle
egress is capped at --egress bytes a second), makes every agent hold a file to serve, and
replays --trace folded onto the agents (allot sim coflow --fold: port p on agent p mod N,
sizes times --fold-bytes, arrivals times --fold-time) as HTTP downloads between them: each
coflow starts at its arrival, is registered with the leader's coflow scheduler (uncoordinated:
not), and its flows download at once (with --ingress, every agent's shuffle ingress is capped
too: the senders ask the receiving agent for each chunk). It prints each policy's coflow completion times, the first policy's speedup over
each, and the simulator's prediction for the same folded trace on the same fabric (receivers
unlimited unless --ingress; the leader's 100 ms slot; decisions served by order only, as the
agents pace them; uncoordinated as max-min fair sharing).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := os.Open(o.trace)
			if err != nil {
				return err
			}
			tr, err := coflowsim.ParseTrace(f)
			f.Close()
			if err != nil {
				return err
			}
			if o.first > 0 && o.first < len(tr.Coflows) {
				tr.Coflows = tr.Coflows[:o.first]
			}
			if tr, err = coflowsim.Fold(tr, o.agents, o.foldBytes, o.foldTime); err != nil {
				return err
			}
			level := hclog.LevelFromString(o.logLevel)
			if level == hclog.NoLevel {
				return fmt.Errorf("--log-level: unknown level %q", o.logLevel)
			}
			cfg := coflowbench.Config{Trace: tr, Policies: strings.Split(o.policies, ","), Egress: int64(o.egress),
				Ingress: int64(o.ingress), Slots: o.slots, DataDir: o.dataDir,
				Logger: hclog.New(&hclog.LoggerOptions{Name: "allot", Level: level, Output: os.Stderr})}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out := cmd.OutOrStdout()
			var bytes int64
			for _, c := range tr.Coflows {
				bytes += c.Bytes()
			}
			fmt.Fprintf(out, "trace: %d coflows on %d agents, %.1f MB; ports of %s/s\n", len(tr.Coflows), tr.Ports,
				float64(bytes)/1e6, o.egress.String())
			runs, err := coflowbench.Run(ctx, cfg)
			if err != nil {
				return err
			}
			rows, err := coflowbench.Report(tr, int64(o.egress), int64(o.ingress), runs)
			if err != nil {
				return err
			}
			coflowbench.WriteTable(out, rows)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.trace, "trace", "sim/coflowsim/testdata/FB2010-1Hr-150-0.txt", "Coflow-Benchmark trace file")
	fl.StringVar(&o.policies, "policies", o.policies, "comma-separated: the leader's coflow schedulers (philae, aalo, fifo, ...) and uncoordinated; speedups are the first's")
	fl.IntVar(&o.agents, "agents", o.agents, "agents: the trace's ports are folded onto them")
	fl.IntVar(&o.first, "first", 0, "keep only the first N coflows by arrival (0: all)")
	fl.Float64Var(&o.foldBytes, "fold-bytes", o.foldBytes, "multiply every flow's bytes by this")
	fl.Float64Var(&o.foldTime, "fold-time", o.foldTime, "multiply every arrival by this")
	fl.Var(&o.egress, "egress", "every agent's shuffle egress, bytes a second (16MB)")
	fl.Var(&o.ingress, "ingress", "every agent's --shuffle-ingress, bytes a second (default: no limit; the simulator models only no limit or --egress)")
	fl.IntVar(&o.slots, "slots", o.slots, "every agent's --shuffle-slots")
	fl.StringVar(&o.dataDir, "data-dir", "", "directory for the clusters' data (default: a temporary one, removed)")
	fl.StringVar(&o.logLevel, "log-level", o.logLevel, "the clusters' log level")
	return cmd
}
