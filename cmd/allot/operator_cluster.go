package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

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
