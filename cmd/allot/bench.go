package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/internal/loadgen"
)

func benchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure a cluster on this machine under load",
	}
	cmd.AddCommand(benchLoadCommand(), benchAgentsCommand(), benchCoflowCommand())
	return cmd
}

func benchLoadCommand() *cobra.Command {
	cfg := loadgen.DefaultConfig()
	var logLevel string
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Run a master trio against thousands of simulated agents and busy frameworks, and measure it",
		Long: `Starts three 'allot master' processes with the shipped defaults (plus --master-arg),
connects --agents simulated agents (each a NATS client of its own that registers, heartbeats,
follows launch and kill commands and reports task states, running nothing; all in a process of
their own at a lower priority, as agents on machines of their own take no CPU from the
masters) and --frameworks
frameworks that keep --tasks tasks running, waits for them to get there, then measures for
--duration: allocation round time, Raft commit time, offer-to-launch and status-update latency,
the masters' CPU and memory, and the agents' NATS traffic. --kills kills the leader (SIGKILL)
that many times during the window and times each kill to the next leader and to the first offer.
At the end it stops launching and checks that every task launched ended exactly once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return err
			}
			cfg.Bin = bin
			cfg.AgentLogLevel = logLevel
			cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "bench", Level: hclog.LevelFromString(logLevel), Output: cmd.ErrOrStderr()})
			cfg.Progress = cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := loadgen.Run(ctx, cfg)
			rep.Write(cmd.OutOrStdout())
			if err != nil {
				return fmt.Errorf("bench load: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Agents, "agents", cfg.Agents, "simulated agents")
	f.Int64Var(&cfg.AgentCPUs, "agent-cpus", cfg.AgentCPUs, "CPUs of each simulated agent")
	f.Int64Var(&cfg.AgentMemMiB, "agent-mem", cfg.AgentMemMiB, "memory of each simulated agent, MiB")
	f.IntVar(&cfg.Frameworks, "frameworks", cfg.Frameworks, "frameworks keeping the cluster busy")
	f.IntVar(&cfg.Tasks, "tasks", cfg.Tasks, "tasks (1 CPU, 1 GiB) the frameworks keep running together")
	f.DurationVar(&cfg.TaskDuration, "task-duration", cfg.TaskDuration, "how long a task runs on average (spread ±50%)")
	f.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "longest wait for the tasks to start before measuring")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "the measured window")
	f.IntVar(&cfg.Kills, "kills", cfg.Kills, "leader kills during the window, evenly spread")
	f.DurationVar(&cfg.Drain, "drain", 0, "longest wait after the window for the tasks launched to end (0: twice --task-duration plus a minute)")
	f.BoolVar(&cfg.CatchUp, "catch-up", false, "after the window, kill a follower, empty its data directory, start it again and time its catch-up")
	f.IntVar(&cfg.Connect, "connect", cfg.Connect, "agents connecting and registering at once")
	f.StringArrayVar(&cfg.MasterArgs, "master-arg", nil, "a flag added to every master's command line (repeatable)")
	f.StringVar(&cfg.Dir, "dir", "", "where the masters keep data and logs (default: a temporary directory, removed)")
	f.StringVar(&logLevel, "log-level", "warn", "log level of the agents and frameworks")
	return cmd
}

// benchAgentsCommand is the agents' process of 'allot bench load'.
func benchAgentsCommand() *cobra.Command {
	var cfg loadgen.FleetConfig
	var urls, logLevel string
	cmd := &cobra.Command{
		Use:    "agents",
		Short:  "The simulated agents of 'allot bench load', in a process of their own",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.URLs = splitList(urls)
			cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "bench", Level: hclog.LevelFromString(logLevel), Output: cmd.ErrOrStderr()})
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return loadgen.RunFleet(ctx, cfg, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&urls, "nats", "", "the masters' NATS URLs, comma-separated")
	f.IntVar(&cfg.Agents, "agents", 1, "simulated agents")
	f.IntVar(&cfg.Connect, "connect", 64, "agents connecting and registering at once")
	f.Int64Var(&cfg.AgentCPUs, "agent-cpus", 4, "CPUs of each agent")
	f.Int64Var(&cfg.AgentMemMiB, "agent-mem", 8192, "memory of each agent, MiB")
	f.StringVar(&logLevel, "log-level", "warn", "log level")
	return cmd
}
