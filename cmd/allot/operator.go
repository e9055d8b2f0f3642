package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The operator commands talk to the masters' HTTP API (master/api): any
// master answers, followers redirect to the leader.

// defaultMasters are the HTTP APIs of `allot dev`'s three masters.
const defaultMasters = "127.0.0.1:5050,127.0.0.1:5051,127.0.0.1:5052"

// operatorFlags are the flags every operator command takes.
type operatorFlags struct {
	masters   string
	token     string
	principal string
	secret    string
	json      bool
	timeout   time.Duration
}

func (o *operatorFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&o.masters, "masters", envOr("ALLOT_MASTERS", defaultMasters), "comma-separated masters' HTTP addresses (host:port or URL; $ALLOT_MASTERS)")
	fl.StringVar(&o.token, "token", os.Getenv("ALLOT_OPERATOR_TOKEN"), "operator token for actions and full views, when the masters have one ($ALLOT_OPERATOR_TOKEN)")
	fl.StringVar(&o.principal, "principal", os.Getenv("ALLOT_PRINCIPAL"), "read as this framework principal, without the operator token: its own frameworks and tasks only ($ALLOT_PRINCIPAL)")
	fl.StringVar(&o.secret, "secret", os.Getenv("ALLOT_SECRET"), "the secret of --principal ($ALLOT_SECRET)")
	fl.BoolVar(&o.json, "json", false, "print the API's JSON instead of a table")
	fl.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on a request after this long")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// newClient returns a client of the --masters.
func (o *operatorFlags) newClient() (*api.Client, error) {
	return api.NewClient(strings.Split(o.masters, ","), api.WithToken(o.token), api.WithPrincipal(o.principal, o.secret))
}

// call makes one API call bounded by --timeout and prints its answer: as
// JSON with --json, else with table.
func call[T any](o *operatorFlags, cmd *cobra.Command, do func(context.Context, *api.Client) (T, error), table func(io.Writer, T)) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	v, err := do(ctx, c)
	if err != nil {
		return err
	}
	return o.emit(cmd.OutOrStdout(), v, func(w io.Writer) { table(w, v) })
}

// emit prints v as indented JSON with --json, else calls table.
func (o *operatorFlags) emit(w io.Writer, v any, table func(io.Writer)) error {
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	table(w)
	return nil
}

// operatorCommands returns the operator commands.
func operatorCommands() []*cobra.Command {
	o := &operatorFlags{}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the leader and a summary of agents, frameworks, tasks and offers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.State, error) {
				// The leader as the state names it: the one that served
				// it, never a follower's stale idea of who leads.
				return c.State(ctx)
			}, printStatus)
		},
	}
	o.register(status)
	return []*cobra.Command{status, agentOpsCommand(), frameworkOpsCommand(), roleOpsCommand(), eventsCommand(), operatorCommand(),
		taskOpsCommand(), coflowOpsCommand(),
		listingCommand("offer", "List outstanding offers", "List the outstanding offers", func(st api.State) any { return st.Offers }, printOffers)}
}

// listCommand is a "list" subcommand printing part of the state.
func listCommand(o *operatorFlags, short string, pick func(api.State) any, table func(io.Writer, api.State)) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st api.State
			return call(o, cmd, func(ctx context.Context, c *api.Client) (any, error) {
				var err error
				st, err = c.State(ctx)
				return pick(st), err
			}, func(w io.Writer, _ any) { table(w, st) })
		},
	}
}

func agentOpsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "agents", Short: "List, drain, activate and mark agents gone (allot agent runs an agent)"}
	o.register(cmd)
	action := func(use, short string, act func(*api.Client, context.Context, protocol.AgentID) (api.AgentState, error)) *cobra.Command {
		return &cobra.Command{
			Use:   use + " AGENT",
			Short: short + " (AGENT: its ID, a unique prefix of it, or its hostname)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return call(o, cmd, func(ctx context.Context, c *api.Client) (api.AgentState, error) {
					id, err := resolveAgent(ctx, c, args[0])
					if err != nil {
						return api.AgentState{}, err
					}
					return act(c, ctx, id)
				}, func(w io.Writer, st api.AgentState) { fmt.Fprintf(w, "agent %s is %s\n", st.AgentID, st.State) })
			},
		}
	}
	cmd.AddCommand(
		listCommand(o, "List the agents", func(st api.State) any { return st.Agents }, printAgents),
		drainCommand(o),
		action("activate", "Offer a drained agent's resources again", (*api.Client).ActivateAgent),
		action("mark-gone", "Take an agent out for good: its tasks are LOST for frameworks to run elsewhere, and it may never reregister", (*api.Client).MarkAgentGone),
	)
	return cmd
}

func frameworkOpsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "frameworks", Aliases: []string{"framework"}, Short: "List frameworks, explain their offers and tear them down"}
	o.register(cmd)
	explain := &cobra.Command{
		Use:   "explain FRAMEWORK_ID",
		Short: "Say why a framework is or is not offered resources",
		Long: `Say why a framework is or is not offered resources: its demand, its decline
filters and, for each task shape it declared, how many agents could take a
task now and why the others cannot (draining, declined with a filter,
failing constraints, too few free resources), and roles at their quota limit.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.Explanation, error) {
				return c.Explain(ctx, protocol.FrameworkID(args[0]))
			}, printExplanation)
		},
	}
	cmd.AddCommand(listCommand(o, "List the frameworks", func(st api.State) any { return st.Frameworks }, printFrameworks), explain,
		teardownCommand(o))
	return cmd
}

func coflowOpsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "coflows", Aliases: []string{"coflow"}, Short: "List the shuffles the leader orders as coflows"}
	o.register(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the coflows frameworks registered, as the leader's coflow scheduler sees them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.Coflows, error) { return c.Coflows(ctx) }, printCoflows)
		},
	})
	return cmd
}

func taskOpsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "tasks", Aliases: []string{"task"}, Short: "List tasks, print their logs and kill them"}
	o.register(cmd)
	cmd.AddCommand(listCommand(o, "List the tasks the master knows", func(st api.State) any { return st.Tasks }, printTasks), logsCommand(o),
		killCommand(o))
	return cmd
}

// listingCommand is a noun whose only subcommand is "list".
func listingCommand(noun, short, listShort string, pick func(api.State) any, table func(io.Writer, api.State)) *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: noun + "s", Aliases: []string{noun}, Short: short}
	o.register(cmd)
	cmd.AddCommand(listCommand(o, listShort, pick, table))
	return cmd
}

func roleOpsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "roles", Aliases: []string{"role"}, Short: "List roles and set their weights and quotas"}
	o.register(cmd)
	var weight float64
	var guarantee, limit, preemption string
	var constraints []string
	set := &cobra.Command{
		Use:   "set ROLE_PATH",
		Short: "Set a role's weight and quota (e.g. set eng/prod --weight 2 --guarantee cpus=4000 --limit cpus=8000,mem=16384)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// What is not given keeps its setting; a flag given empty
			// removes it.
			req := api.RoleRequest{Preemption: preemption}
			if cmd.Flags().Changed("preemption") && preemption == "" {
				req.Preemption = api.PreemptionInherit
			}
			if cmd.Flags().Changed("weight") {
				req.Weight = &weight
			}
			var err error
			if req.Guarantee, err = parseAmounts("--guarantee", guarantee); err != nil {
				return err
			}
			if req.Guarantee == nil && cmd.Flags().Changed("guarantee") {
				req.Guarantee = map[string]int64{}
			}
			if req.Limit, err = parseAmounts("--limit", limit); err != nil {
				return err
			}
			if req.Limit == nil && cmd.Flags().Changed("limit") {
				req.Limit = map[string]int64{}
			}
			if cmd.Flags().Changed("offer-constraint") {
				req.OfferConstraints = []protocol.Constraint{}
			}
			for _, cs := range constraints {
				if strings.TrimSpace(cs) == "" {
					continue
				}
				c, err := protocol.ParseConstraint(cs)
				if err != nil {
					return fmt.Errorf("--offer-constraint: %w", err)
				}
				req.OfferConstraints = append(req.OfferConstraints, c)
			}
			stderr := cmd.ErrOrStderr()
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RoleConfig, error) {
				return c.SetRole(ctx, args[0], req)
			}, func(w io.Writer, rc api.RoleConfig) {
				for _, warning := range rc.Warnings {
					fmt.Fprintf(stderr, "warning: role %s: %s\n", rc.Path, warning)
				}
				fmt.Fprintf(w, "role %s: weight %g, guarantee %s, limit %s, offer constraints %s, preemption %s\n", rc.Path, rc.Weight,
					orNone(api.FormatResources(rc.Guarantee)), orNone(api.FormatResources(rc.Limit)), constraintList(rc.OfferConstraints),
					orInherited(rc.Preemption))
			})
		},
	}
	set.Flags().Float64Var(&weight, "weight", 1, "the role's weight among its siblings (not given: unchanged, 1 for a new role)")
	set.Flags().StringVar(&guarantee, "guarantee", "", "quota guarantee as name=amount pairs, cpus in milli-CPU and mem in MiB (not given: unchanged; empty: none)")
	set.Flags().StringVar(&limit, "limit", "", "quota limit as name=amount pairs, cpus in milli-CPU and mem in MiB (not given: unchanged; empty: none)")
	set.Flags().StringVar(&preemption, "preemption", "", "the role's preemption policy: off, guarantees or fair (not given: unchanged; empty: its parent's, at the top the cluster's --preemption)")
	set.Flags().StringArrayVar(&constraints, "offer-constraint", nil, "offer only agents satisfying this constraint to the role's frameworks, e.g. pool==gpu or 'zone in z1,z2' (repeatable; not given: unchanged; given empty: every agent)")
	cmd.AddCommand(listCommand(o, "List the roles with their shares and limits", func(st api.State) any { return st.Roles }, printRoles), set)
	return cmd
}

// parseAmounts reads flag's value "cpus=8000,mem=16384".
func parseAmounts(flag, s string) (map[string]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		name, amount, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(amount, 10, 64)
		if !ok || name == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("%s %q: want name=amount pairs with whole amounts, e.g. cpus=8000,mem=16384", flag, s)
		}
		out[name] = n
	}
	return out, nil
}

func eventsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Follow the cluster events (tasks, agents, frameworks) until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.newClient()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			w := cmd.OutOrStdout()
			enc := json.NewEncoder(w)
			err = c.Events(ctx, func(ev protocol.ClusterEvent) error {
				if o.json {
					return enc.Encode(ev)
				}
				_, err := fmt.Fprintln(w, describeEvent(ev))
				return err
			})
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	o.register(cmd)
	return cmd
}

// operatorCommand holds the masters' own administration: Raft membership.
func operatorCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "operator", Short: "Administer the masters themselves"}
	o.register(cmd)
	rc := &cobra.Command{Use: "raft", Short: "List, add and remove the masters' Raft members (to replace a master)"}
	peers := func(w io.Writer, p api.RaftPeers) {
		table(w, "ID\tADDRESS\tLEADER", func(tw io.Writer) {
			for _, x := range p.Peers {
				fmt.Fprintf(tw, "%s\t%s\t%t\n", x.ID, x.Address, x.Leader)
			}
		})
	}
	rc.AddCommand(&cobra.Command{
		Use:   "list-peers",
		Short: "List the masters' Raft members",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RaftPeers, error) { return c.RaftPeers(ctx) }, peers)
		},
	}, &cobra.Command{
		Use:   "add-peer NODE_ID RAFT_ADDRESS",
		Short: "Add a master, started without --bootstrap, to the Raft configuration",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RaftPeers, error) {
				return c.AddRaftPeer(ctx, args[0], args[1])
			}, peers)
		},
	}, &cobra.Command{
		Use:   "remove-peer NODE_ID",
		Short: "Remove a master, e.g. one gone for good, from the Raft configuration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RaftPeers, error) {
				return c.RemoveRaftPeer(ctx, args[0])
			}, peers)
		},
	})
	cmd.AddCommand(rc, snapshotCommand(o))
	return cmd
}

// snapshotCommand backs the replicated state up and restores it.
func snapshotCommand(o *operatorFlags) *cobra.Command {
	sc := &cobra.Command{Use: "snapshot", Short: "Back the masters' replicated state up, or restore it"}
	sc.AddCommand(&cobra.Command{
		Use:   "save FILE",
		Short: "Write a snapshot of the replicated state to FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var buf bytes.Buffer
			return call(o, cmd, func(ctx context.Context, c *api.Client) (int64, error) {
				n, err := c.SaveSnapshot(ctx, &buf)
				if err != nil {
					return n, err
				}
				return n, os.WriteFile(args[0], buf.Bytes(), 0o600)
			}, func(w io.Writer, n int64) { fmt.Fprintf(w, "saved %d bytes to %s\n", n, args[0]) })
		},
	}, &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the cluster's replicated state with the snapshot in FILE",
		Long: `Replace the cluster's replicated state with a snapshot "snapshot save" wrote.
Every master installs it and the leader rebuilds its allocator from it; agents and
frameworks then reconcile with it as after a failover.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.Restored, error) {
				return c.RestoreSnapshot(ctx, data)
			}, func(w io.Writer, r api.Restored) {
				fmt.Fprintf(w, "restored the state as of Raft index %d\n", r.SnapshotIndex)
			})
		},
	})
	return sc
}

// orInherited names an unset per-role setting.
func orInherited(s string) string {
	if s == "" {
		return "inherited"
	}
	return s
}
