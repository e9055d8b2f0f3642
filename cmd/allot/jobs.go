package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/jobrunner"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// jobsFlags reach the cluster as the jobs' principal.
type jobsFlags struct {
	nats, principal, secret string
	masters                 string
	logLevel                string
}

func (f *jobsFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.nats, "nats", os.Getenv("ALLOT_NATS"), "the cluster's NATS URLs, comma-separated ($ALLOT_NATS)")
	fl.StringVar(&f.principal, "principal", os.Getenv("ALLOT_PRINCIPAL"), "the jobs' principal ($ALLOT_PRINCIPAL)")
	fl.StringVar(&f.secret, "secret", os.Getenv("ALLOT_SECRET"), "the principal's secret ($ALLOT_SECRET)")
	fl.StringVar(&f.masters, "masters", os.Getenv("ALLOT_MASTERS"), "masters' HTTP addresses, to check job files against the agents ($ALLOT_MASTERS)")
	fl.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr")
}

func (f *jobsFlags) options(stderr io.Writer) ([]framework.Option, hclog.Logger, error) {
	if f.nats == "" {
		return nil, nil, errors.New("--nats: no URL (set it, or $ALLOT_NATS as allot dev prints it)")
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "allot-jobs", Level: hclog.LevelFromString(f.logLevel), Output: stderr})
	opts := []framework.Option{framework.WithNATSURLs(strings.Split(f.nats, ",")...), framework.WithLogger(logger)}
	if f.principal != "" {
		opts = append(opts, framework.WithPrincipal(f.principal), framework.WithSecret(f.secret))
	}
	return opts, logger, nil
}

// open connects to the principal's store for one command, with the
// command's time limit; done releases both.
func (f *jobsFlags) open(cmd *cobra.Command) (context.Context, *framework.Store, func(), error) {
	opts, _, err := f.options(cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := framework.OpenStore(opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	return ctx, s, func() { cancel(); s.Close() }, nil
}

// jobsCommand is `allot jobs`: the job runner and what operates it.
func jobsCommand() *cobra.Command {
	f := &jobsFlags{}
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "Run batch jobs and services from job files (the job runner)",
		Long: `The job runner keeps the jobs of job files (examples/jobs, docs/jobs.md) running on the
cluster: batch jobs until they finish, services for good, restarting what fails and
replacing instances one group at a time when a job changes. Jobs are kept in the
principal's store at the masters, so they survive the loss of a master and of the runner.

  allot jobs serve             run the job runner (a framework per role its jobs use)
  allot jobs run FILE          submit a job file as the job's next version (--check: only check it)
  allot jobs status [NAME]     the jobs, or one job's versions and instances
  allot jobs stop NAME         stop a job: its instances are killed
  allot jobs history NAME      the versions kept, which runs, which was last healthy (-p: their files)
  allot jobs revert NAME N     make version N's file the job's next version`,
	}
	f.register(cmd)
	cmd.AddCommand(jobsServe(f), jobsRun(f), jobsStatus(f), jobsStop(f), jobsHistory(f), jobsRevert(f))
	return cmd
}

func jobsServe(f *jobsFlags) *cobra.Command {
	cfg := jobrunner.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the job runner until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, logger, err := f.options(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cfg.Connect, cfg.Logger = opts, logger
			r, err := jobrunner.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return r.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&cfg.Name, "name", cfg.Name, "the frameworks' name")
	cmd.Flags().DurationVar(&cfg.Interval, "interval", cfg.Interval, "how often every job is planned again")
	cmd.Flags().DurationVar(&cfg.FailoverTimeout, "failover-timeout", cfg.FailoverTimeout, "how long the master keeps the runner's tasks while no runner is connected")
	cmd.Flags().DurationVar(&cfg.LeaseTTL, "lease-ttl", cfg.LeaseTTL, "how long a waiting runner waits for the active one's lease to lapse before it takes over")
	return cmd
}

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

func jobsStatus(f *jobsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status [NAME]",
		Short: "The jobs, or one job's versions and instances",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				names, err := jobrunner.Names(ctx, s)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "JOB\tVERSION\tSTATE\tINSTANCES")
				for _, name := range names {
					v, _, err := jobrunner.Read(ctx, s, name)
					if err != nil {
						return err
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", name, v.Spec.Version, v.State(), v.Counts())
				}
				return tw.Flush()
			}
			v, ok, err := jobrunner.Read(ctx, s, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no job %q", args[0])
			}
			fmt.Fprintf(out, "job %s: version %d, %s", v.Name, v.Spec.Version, v.State())
			if v.Status.Message != "" {
				fmt.Fprintf(out, " (%s)", v.Status.Message)
			}
			fmt.Fprintf(out, "\nversions kept: %v, last stable: %d\n", v.Spec.Versions, v.Status.StableVersion)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "INSTANCE\tSTATE\tHEALTHY\tAGENT\tSINCE\tMESSAGE")
			for _, in := range v.Instances {
				fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\n", in.ID, in.State, in.Healthy, in.Agent, in.Since.Format(time.RFC3339), in.Message)
			}
			return tw.Flush()
		},
	}
}

func jobsStop(f *jobsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a job: the runner kills its instances",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			if err := jobs.Stop(ctx, s, args[0], time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s: stopping\n", args[0])
			return nil
		},
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

func jobsHistory(f *jobsFlags) *cobra.Command {
	files := false
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "The versions of a job the store keeps",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			v, ok, err := jobrunner.Read(ctx, s, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no job %q", args[0])
			}
			out := cmd.OutOrStdout()
			for i := len(v.Spec.Versions) - 1; i >= 0; i-- {
				n := v.Spec.Versions[i]
				var notes []string
				if n == v.Spec.Version {
					notes = append(notes, "current: "+v.State())
					if v.Spec.Revert {
						notes = append(notes, "a revert")
					}
				}
				if n == v.Status.StableVersion {
					notes = append(notes, "last healthy throughout")
				}
				fmt.Fprintf(out, "version %d", n)
				if len(notes) > 0 {
					fmt.Fprintf(out, " (%s)", strings.Join(notes, ", "))
				}
				fmt.Fprintln(out)
				if files {
					src, _, err := jobrunner.Source(ctx, s, args[0], n)
					if err != nil {
						return err
					}
					for _, line := range strings.Split(strings.TrimRight(string(src), "\n"), "\n") {
						fmt.Fprintln(out, "  | "+line)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&files, "files", "p", false, "print each version's job file")
	return cmd
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
