package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// logsCommand prints a task's stdout or stderr from its agent's file
// server, as `nomad alloc logs` does: the masters say where the task runs
// and hand out its framework's files token; the agent says which sandbox
// is the task's.
func logsCommand(o *operatorFlags) *cobra.Command {
	var stderr, follow bool
	var lines int
	cmd := &cobra.Command{
		Use:   "logs FRAMEWORK_ID TASK_ID",
		Short: "Print a task's stdout (or stderr) from its agent",
		Long: `Print the last lines of a task's stdout (--stderr: stderr) from the file server of
the agent it ran on, and with --follow whatever it appends until interrupted. Needs the
operator token and masters started with the agents' --files-secret.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fw, task := protocol.FrameworkID(args[0]), protocol.TaskID(args[1])
			file := "stdout"
			if stderr {
				file = "stderr"
			}
			c, err := o.newClient()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			setup, cancel := context.WithTimeout(ctx, o.timeout)
			defer cancel()
			agentHTTP, err := taskAgent(setup, c, fw, task)
			if err != nil {
				return err
			}
			tok, err := c.FilesToken(setup, fw)
			if err != nil {
				return err
			}
			sandbox, err := api.TaskSandbox(setup, http.DefaultClient, agentHTTP, fw, task)
			if err != nil {
				return err
			}
			if !follow {
				ctx = setup
			}
			resp, err := api.TailFile(ctx, http.DefaultClient, agentHTTP, tok.Token, sandbox+"/"+file, lines, follow)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if _, err := io.Copy(cmd.OutOrStdout(), resp.Body); err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing what the task appends, until interrupted")
	cmd.Flags().IntVar(&lines, "lines", 100, "how many of the last lines to print")
	return cmd
}

// taskAgent finds the file server of the agent task ran on, among running
// and completed tasks.
func taskAgent(ctx context.Context, c *api.Client, fw protocol.FrameworkID, task protocol.TaskID) (string, error) {
	st, err := c.State(ctx)
	if err != nil {
		return "", err
	}
	tasks := st.Tasks
	for _, f := range append(st.Frameworks, st.CompletedFrameworks...) {
		tasks = append(tasks, f.CompletedTasks...)
	}
	var agent protocol.AgentID
	for _, t := range tasks {
		if t.FrameworkID == fw && t.TaskID == task {
			agent = t.AgentID
		}
	}
	if agent == "" {
		return "", fmt.Errorf("the masters know no task %s of framework %s", task, fw)
	}
	for _, a := range st.Agents {
		if a.ID == agent && a.HTTP != "" {
			return a.HTTP, nil
		}
	}
	return "", fmt.Errorf("task %s ran on agent %s, whose file server the masters do not know", task, agent)
}
