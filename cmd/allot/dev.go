package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/internal/devcluster"
)

// devFlags are the `allot dev` settings.
type devFlags struct {
	DataDir        string
	Masters        int
	Agents         int
	AgentResources string
	NATSPort       int
	HTTPPort       int
	RaftPort       int
	Isolation      string
	LogLevel       string
	// The coflow testbed's knobs (docs/coflow.md).
	CoflowScheduler     string
	AgentShuffleSlots   int
	AgentShuffleEgress  byteSize
	AgentShuffleIngress byteSize
}

// defaultDevDataDir is stable across runs, so a second `allot dev`
// resumes the first one's cluster.
func defaultDevDataDir() string {
	return filepath.Join(os.TempDir(), "allot-dev-"+strconv.Itoa(os.Getuid()))
}

func devCommand() *cobra.Command {
	def := devcluster.DefaultConfig()
	f := devFlags{
		DataDir: defaultDevDataDir(), Masters: def.Masters, Agents: def.Agents, NATSPort: def.NATSPort,
		HTTPPort: def.HTTPPort, RaftPort: def.RaftPort, Isolation: string(def.Isolation), LogLevel: "warn",
	}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local cluster: NATS, three masters and a few agents in one process",
		Long: `Run a whole cluster on this machine in one process: an embedded NATS server, three
masters (or one) replicating through Raft on loopback, and agents that run tasks as
processes, each with its own hostname (dev-agent-N) and attributes (rack, zone).

Everything is kept under --data-dir. The first start chooses the layout (ports, agents,
resources) and saves it in dev.json; a later start on the same directory resumes the
cluster with its state: frameworks, tasks and completed tasks, and the agents' tasks.
Ctrl-C stops the agents (their tasks keep running and are found again on the next start),
then the masters, then NATS.

Ports: NATS on --nats-port, master N's HTTP API on --http-port+N-1, agent N's file server
on --http-port+10+N-1, master N's Raft on --raft-port+N-1; 0 picks free ports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := devcluster.Start(ctx, cfg)
			if err != nil {
				if errors.Is(err, devcluster.ErrPortInUse) {
					return fmt.Errorf("%w (choose other ports with --nats-port, --http-port and --raft-port, or 0 for free ones, on a new --data-dir)", err)
				}
				return err
			}
			printDevCluster(cmd.OutOrStdout(), c)
			select {
			case <-ctx.Done():
			case <-c.Failed():
			}
			running := c.RunningTasks()
			fmt.Fprintln(cmd.OutOrStdout(), "stopping...")
			closeErr := c.Close()
			if running > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%d task(s) still running; the next `allot dev --data-dir %s` finds them again\n",
					running, c.DataDir())
			}
			return errors.Join(c.Err(), closeErr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.DataDir, "data-dir", f.DataDir, "directory for the layout, the masters' Raft data and the agents' work dirs")
	fl.IntVar(&f.Masters, "masters", f.Masters, "number of masters: 3 or 1")
	fl.IntVar(&f.Agents, "agents", f.Agents, "number of agents")
	fl.StringVar(&f.AgentResources, "agent-resources", "", "each agent's resources, e.g. cpus=4000,mem=8192 (default: this machine's divided among the agents)")
	fl.IntVar(&f.NATSPort, "nats-port", f.NATSPort, "NATS client port (0: a free port)")
	fl.IntVar(&f.HTTPPort, "http-port", f.HTTPPort, "first master's HTTP port; the others and the agents follow (0: free ports)")
	fl.IntVar(&f.RaftPort, "raft-port", f.RaftPort, "first master's Raft port; the others follow (0: free ports)")
	fl.StringVar(&f.Isolation, "isolation", f.Isolation, "agents' task limits: auto (cgroups, v2 or v1, when usable), cgroups, portable")
	fl.StringVar(&f.LogLevel, "log-level", f.LogLevel, "trace, debug, info, warn or error (logs go to stderr)")
	fl.StringVar(&f.CoflowScheduler, "coflow-scheduler", "", "the masters' coflow scheduler (allot master --coflow-scheduler; default philae)")
	fl.IntVar(&f.AgentShuffleSlots, "agent-shuffle-slots", 0, "each agent's --shuffle-slots (default 2)")
	fl.Var(&f.AgentShuffleEgress, "agent-shuffle-egress", "each agent's --shuffle-egress, bytes a second (16MB; default unlimited)")
	fl.Var(&f.AgentShuffleIngress, "agent-shuffle-ingress", "each agent's --shuffle-ingress, bytes a second (16MB; default unlimited)")
	return cmd
}

// config turns the flags into a devcluster.Config. On a data dir that
// already holds a cluster, layout flags given explicitly must match it.
func (f devFlags) config(cmd *cobra.Command) (devcluster.Config, error) {
	cfg := devcluster.DefaultConfig()
	cfg.DataDir, cfg.Masters, cfg.Agents = f.DataDir, f.Masters, f.Agents
	cfg.NATSPort, cfg.HTTPPort, cfg.RaftPort = f.NATSPort, f.HTTPPort, f.RaftPort
	cfg.Isolation = runner.Isolation(f.Isolation)
	cfg.CoflowScheduler, cfg.AgentShuffleSlots, cfg.AgentShuffleEgress = f.CoflowScheduler, f.AgentShuffleSlots, int64(f.AgentShuffleEgress)
	cfg.AgentShuffleIngress = int64(f.AgentShuffleIngress)
	level := hclog.LevelFromString(f.LogLevel)
	if level == hclog.NoLevel {
		return cfg, fmt.Errorf("--log-level: unknown level %q", f.LogLevel)
	}
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "allot", Level: level, Output: os.Stderr})
	res, err := parseResources(f.AgentResources)
	if err != nil {
		return cfg, fmt.Errorf("--agent-resources: %w", err)
	}
	cfg.AgentResources = res
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	layout, found, err := devcluster.LoadLayout(cfg.DataDir)
	if err != nil || !found {
		return cfg, err
	}
	changed := cmd.Flags().Changed
	saved := func(flag, what string) error {
		return fmt.Errorf("--%s: %s already holds a cluster with %s; use another --data-dir for a different one",
			flag, cfg.DataDir, what)
	}
	switch {
	case changed("masters") && f.Masters != len(layout.Masters):
		return cfg, saved("masters", fmt.Sprintf("%d master(s)", len(layout.Masters)))
	case changed("agents") && f.Agents != len(layout.Agents):
		return cfg, saved("agents", fmt.Sprintf("%d agent(s)", len(layout.Agents)))
	case changed("nats-port") && f.NATSPort != 0 && !strings.HasSuffix(layout.NATSAddr, ":"+strconv.Itoa(f.NATSPort)):
		return cfg, saved("nats-port", "NATS at "+layout.NATSAddr)
	case changed("http-port") && f.HTTPPort != 0 && !strings.HasSuffix(layout.Masters[0].HTTPAddr, ":"+strconv.Itoa(f.HTTPPort)):
		return cfg, saved("http-port", "its first master's HTTP API at "+layout.Masters[0].HTTPAddr)
	case changed("raft-port") && f.RaftPort != 0 && !strings.HasSuffix(layout.Masters[0].RaftAddr, ":"+strconv.Itoa(f.RaftPort)):
		return cfg, saved("raft-port", "its first master's Raft at "+layout.Masters[0].RaftAddr)
	}
	if changed("agent-resources") {
		for name, v := range res.Scalars {
			if got := layout.Agents[0].Resources.Scalar(name); got != v {
				return cfg, saved("agent-resources", fmt.Sprintf("agents of %s=%d", name, got))
			}
		}
	}
	return cfg, nil
}

// printDevCluster tells the user where everything is and how to use it.
func printDevCluster(w io.Writer, c *devcluster.Cluster) {
	l := c.Layout()
	how := "started a new cluster"
	if c.Resumed() {
		how = "resumed the cluster"
	}
	fmt.Fprintf(w, "allot dev: %s of %d master(s) and %d agent(s)\n\n", how, len(l.Masters), len(l.Agents))
	fmt.Fprintf(w, "  data dir   %s\n", c.DataDir())
	fmt.Fprintf(w, "  NATS       %s\n", c.NATSURL())
	leader := c.LeaderHTTPAddr()
	for i, m := range l.Masters {
		label := "masters"
		if i > 0 {
			label = ""
		}
		note := ""
		if m.HTTPAddr == leader {
			note = "  (leader)"
		}
		fmt.Fprintf(w, "  %-9s  %s  http://%s  raft %s%s\n", label, m.ID, m.HTTPAddr, m.RaftAddr, note)
	}
	ids := c.AgentIDs()
	for i, a := range l.Agents {
		label := "agents"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "  %-9s  %s  %s  rack=%s zone=%s  %s  files http://%s\n", label, a.Hostname, ids[i],
			a.Attributes["rack"], a.Attributes["zone"], a.Resources, a.HTTPAddr)
	}
	creds := c.Credentials()
	fmt.Fprintf(w, "\nTenant isolation is on: every NATS connection authenticates and may use only its own\n")
	fmt.Fprintf(w, "subjects (docs/security.md). The credentials are kept in %s.\n",
		filepath.Join(c.DataDir(), "dev.json"))
	fmt.Fprintf(w, "Use the cluster from a shell with:\n")
	fmt.Fprintf(w, "  export ALLOT_NATS=%s\n", c.NATSURL())
	fmt.Fprintf(w, "  export ALLOT_PRINCIPAL=%s\n", devcluster.DevPrincipal)
	fmt.Fprintf(w, "  export ALLOT_SECRET=%s\n", c.FrameworkSecret())
	fmt.Fprintf(w, "  export ALLOT_MASTERS=%s\n", mastersFlag(l))
	fmt.Fprintf(w, "  export ALLOT_OPERATOR_TOKEN=%s\n", creds.OperatorToken)
	fmt.Fprintf(w, "\nInspect it:\n")
	fmt.Fprintf(w, "  allot status --masters %s\n", mastersFlag(l))
	fmt.Fprintf(w, "  web UI: http://%s/ (user operator, the operator token as password)\n", cmp.Or(leader, l.Masters[0].HTTPAddr))
	fmt.Fprintf(w, "  curl -L -H \"Authorization: Bearer $ALLOT_OPERATOR_TOKEN\" http://%s/v1/state\n", cmp.Or(leader, l.Masters[0].HTTPAddr))
	fmt.Fprintf(w, "\nPoint frameworks at it: the examples read the variables above; the Go SDK takes\n")
	fmt.Fprintf(w, "  framework.WithNATSURLs(%q), framework.WithPrincipal(%q), framework.WithSecret(...)\n",
		c.NATSURL(), devcluster.DevPrincipal)
	fmt.Fprintf(w, "\nAdd an agent: give it a credential of --agent-credentials on a cluster of `allot master`s.\n")
	fmt.Fprintf(w, "\nCtrl-C stops the cluster; `allot dev --data-dir %s` resumes it.\n", c.DataDir())
}

// mastersFlag is the --masters value of the operator commands for l.
func mastersFlag(l devcluster.Layout) string {
	addrs := make([]string, 0, len(l.Masters))
	for _, m := range l.Masters {
		addrs = append(addrs, m.HTTPAddr)
	}
	return strings.Join(addrs, ",")
}
