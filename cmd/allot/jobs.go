package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/jobrunner"
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
