package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

func jobsRun(f *jobsFlags) *cobra.Command {
	check := false
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Submit a job file as the job's next version",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			job, err := jobs.Parse(args[0], src)
			if err != nil {
				return err
			}
			if err := f.checkFits(cmd.Context(), job); err != nil {
				return err
			}
			if check && f.nats == "" {
				printJobPlan(out, job)
				fmt.Fprintln(out, "(not compared with the version that runs: no --nats)")
				return nil
			}
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			submit := func(ctx context.Context, s jobs.Store, file string, src []byte) (jobs.Submitted, error) {
				return jobs.Submit(ctx, s, file, src, time.Now())
			}
			if check {
				submit = jobs.Preview
			}
			sub, err := submit(ctx, s, args[0], src)
			if err != nil {
				return err
			}
			switch {
			case sub.Unchanged:
				fmt.Fprintf(out, "job %s: unchanged (version %d runs)\n", sub.Job.Name, sub.Version)
				return nil
			case check:
				fmt.Fprintf(out, "job %s: would be version %d (nothing submitted)\n", sub.Job.Name, sub.Version)
			default:
				fmt.Fprintf(out, "job %s: version %d submitted\n", sub.Job.Name, sub.Version)
			}
			for _, c := range sub.Changes {
				fmt.Fprintf(out, "  %s\n", c)
			}
			printJobPlan(out, sub.Job)
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "only check the file and print what it would start, stop and replace")
	return cmd
}

// printJobPlan says what a job runs.
func printJobPlan(w io.Writer, j *jobs.Job) {
	role := j.Role
	if role == "" {
		role = "(the runner's)"
	}
	fmt.Fprintf(w, "%s job %s in role %s\n", j.Type, j.Name, role)
	if j.Periodic != nil {
		fmt.Fprintf(w, "  on schedule %q, next at %s\n", j.Periodic.Cron, j.Periodic.Next(time.Now()).Format(time.RFC3339))
	}
	for _, g := range j.Groups {
		var names []string
		for _, t := range g.Tasks {
			names = append(names, fmt.Sprintf("%s (%.2f cpus, %d MiB)", t.Name, float64(t.Resources.CPUMilli)/1000, t.Resources.MemMiB))
		}
		fmt.Fprintf(w, "  group %s: %d instance(s) of %s\n", g.Name, g.Count, strings.Join(names, ", "))
		for _, c := range g.Constraints {
			fmt.Fprintf(w, "    constraint %s\n", c)
		}
		fmt.Fprintf(w, "    restart: %d attempts in %v, delay %v, then %s\n", g.Restart.Attempts, g.Restart.Interval, g.Restart.Delay, g.Restart.Mode)
	}
}

// checkFits refuses a job some group of which no agent could ever run,
// where --masters names the cluster; without it the check is skipped.
func (f *jobsFlags) checkFits(ctx context.Context, job *jobs.Job) error {
	if f.masters == "" {
		return nil
	}
	c, err := api.NewClient(strings.Split(f.masters, ","), api.WithPrincipal(f.principal, f.secret))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, err := c.State(ctx)
	if err != nil {
		return fmt.Errorf("reading the agents from the masters (--masters): %w", err)
	}
	var agents []jobs.Agent
	for _, a := range st.Agents {
		if a.State == "active" {
			agents = append(agents, jobs.Agent{Resources: a.Resources, Attributes: attributesOf(a.Attributes)})
		}
	}
	return jobs.CheckFits(job, agents)
}

// attributesOf reads back the JSON form of agent attributes.
func attributesOf(m map[string]any) protocol.Attributes {
	out := protocol.Attributes{}
	for k, v := range m {
		switch x := v.(type) {
		case float64:
			out[k] = protocol.Number(x)
		case []any:
			var items []string
			for _, it := range x {
				items = append(items, fmt.Sprint(it))
			}
			out[k] = protocol.Set(items...)
		default:
			out[k] = protocol.Text(fmt.Sprint(x))
		}
	}
	return out
}

func jobsRevert(f *jobsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "revert NAME VERSION",
		Short: "Make a kept version's job file the job's next version",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			version, err := strconv.Atoi(args[1])
			if err != nil || version < 1 {
				return fmt.Errorf("version %q: want a version number", args[1])
			}
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			sub, err := jobs.Revert(ctx, s, args[0], version, time.Now())
			if err != nil {
				return err
			}
			if sub.Unchanged {
				fmt.Fprintf(cmd.OutOrStdout(), "job %s: version %d already runs that file\n", args[0], sub.Version)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s: version %d is version %d's file\n", args[0], sub.Version, version)
			for _, c := range sub.Changes {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", c)
			}
			return nil
		},
	}
}
