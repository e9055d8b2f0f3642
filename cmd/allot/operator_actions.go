package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The operator's actions on tasks, frameworks and drains with a deadline:
// allot tasks kill, allot frameworks teardown, allot agents drain.

// drainPoll is how often `agents drain --wait` asks whether the agent is
// empty.
const drainPoll = time.Second

// killCommand is `allot tasks kill FRAMEWORK_ID TASK_ID`.
func killCommand(o *operatorFlags) *cobra.Command {
	var force bool
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "kill FRAMEWORK_ID TASK_ID",
		Short: "Kill a task (its KILLED status says killed_by_operator)",
		Long: `Kill a task: the leader sends its agent a kill whose KILLED status carries the
reason killed_by_operator. --grace replaces the task's kill grace period (the time
between SIGTERM and SIGKILL); --force kills a task launched non-preemptible.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if grace < 0 {
				return fmt.Errorf("--grace %s: want a duration that is not negative", grace)
			}
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.TaskKill, error) {
				return c.KillTask(ctx, protocol.FrameworkID(args[0]), protocol.TaskID(args[1]), force, grace)
			}, func(w io.Writer, k api.TaskKill) {
				fmt.Fprintf(w, "task %s/%s on agent %s is being killed (%s)\n", k.FrameworkID, k.TaskID, k.AgentID, k.Reason)
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "kill the task even if it was launched non-preemptible")
	cmd.Flags().DurationVar(&grace, "grace", 0, "time between SIGTERM and SIGKILL (0: the task's own)")
	return cmd
}

// teardownCommand is `allot frameworks teardown FRAMEWORK_ID`.
func teardownCommand(o *operatorFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "teardown FRAMEWORK_ID",
		Short: "Remove a framework: its tasks are shut down and its offers rescinded",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.FrameworkTeardown, error) {
				return c.TeardownFramework(ctx, protocol.FrameworkID(args[0]))
			}, func(w io.Writer, f api.FrameworkTeardown) {
				fmt.Fprintf(w, "framework %s is %s\n", f.FrameworkID, f.State)
			})
		},
	}
}

// drainCommand is `allot agents drain AGENT_ID [--deadline D] [--wait]`.
func drainCommand(o *operatorFlags) *cobra.Command {
	var deadline time.Duration
	var wait bool
	cmd := &cobra.Command{
		Use:   "drain AGENT",
		Short: "Stop offering an agent's resources; its tasks keep running, until --deadline",
		Long: `Stop offering an agent's resources. Its tasks keep running; with --deadline the
frameworks are warned now, and the tasks still running once it has passed are
killed (reason agent_drained). With --wait the command returns when the agent
runs no task any more.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if deadline < 0 {
				return fmt.Errorf("--deadline %s: want a duration that is not negative", deadline)
			}
			var id protocol.AgentID
			err := call(o, cmd, func(ctx context.Context, c *api.Client) (api.AgentState, error) {
				var err error
				if id, err = resolveAgent(ctx, c, args[0]); err != nil {
					return api.AgentState{}, err
				}
				return c.DrainAgentWithin(ctx, id, deadline)
			}, func(w io.Writer, st api.AgentState) {
				if st.DrainDeadline != nil {
					fmt.Fprintf(w, "agent %s is %s; the tasks still on it are killed at %s\n", st.AgentID, st.State, *st.DrainDeadline)
					return
				}
				fmt.Fprintf(w, "agent %s is %s\n", st.AgentID, st.State)
			})
			if err != nil || !wait {
				return err
			}
			return waitDrained(o, cmd, id)
		},
	}
	cmd.Flags().DurationVar(&deadline, "deadline", 0, "kill the tasks still on the agent after this long, e.g. 10m (0: never)")
	cmd.Flags().BoolVar(&wait, "wait", false, "return once the agent runs no task any more")
	return cmd
}

// waitDrained polls the state until agent id is drained, or is no longer
// draining (an error), or the command is interrupted.
func waitDrained(o *operatorFlags, cmd *cobra.Command, id protocol.AgentID) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, o.timeout)
		st, err := c.State(rctx)
		cancel()
		if err != nil {
			return err
		}
		a, ok := findAgent(st, id)
		switch {
		case !ok:
			return fmt.Errorf("agent %s is not registered any more", id)
		case a.Drained:
			return o.emit(cmd.OutOrStdout(), a, func(w io.Writer) { fmt.Fprintf(w, "agent %s is drained: it runs no task\n", id) })
		case a.State != "draining":
			return fmt.Errorf("agent %s is %s, no longer draining", id, a.State)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(drainPoll):
		}
	}
}

func findAgent(st api.State, id protocol.AgentID) (api.Agent, bool) {
	for _, a := range st.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return api.Agent{}, false
}

// resolveAgent finds the agent name designates: its ID, a prefix of one
// ID only, or the hostname of one agent only, as the state lists them.
func resolveAgent(ctx context.Context, c *api.Client, name string) (protocol.AgentID, error) {
	st, err := c.State(ctx)
	if err != nil {
		return "", err
	}
	var matches []protocol.AgentID
	for _, a := range st.Agents {
		if string(a.ID) == name {
			return a.ID, nil
		}
		if a.Hostname == name || strings.HasPrefix(string(a.ID), name) {
			matches = append(matches, a.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w: no agent has the ID, an ID starting with, or the hostname %q", api.ErrNotFound, name)
	case 1:
		return matches[0], nil
	}
	ids := make([]string, len(matches))
	for i, id := range matches {
		ids[i] = string(id)
	}
	return "", fmt.Errorf("%q names %d agents (%s): give more of the ID", name, len(matches), strings.Join(ids, ", "))
}
