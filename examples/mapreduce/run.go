package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/protocol"
)

// runConfig is what `mapreduce run` was asked to do.
type runConfig struct {
	nats []string
	jobs []jobSpec
	// input is the input's files and directories, absolute; empty for
	// generated corpora.
	input     []string
	seed      uint64
	splitSize int64
	demand    protocol.Resources
	altruism  float64
	deadline  time.Duration
	failover  time.Duration
	// output is where the jobs' results go (one job: the directory
	// itself; several: a directory per job in it); empty leaves them in
	// the reducers' sandboxes.
	output     string
	verify     bool
	jsonPath   string
	logLevel   string
	prefix     string
	quiet      bool
	workerPath string
}

// roleRun is the framework of one role, running.
type roleRun struct {
	f    *roleFramework
	d    *framework.Driver
	done chan error // Run's result
}

// run runs the job mix: one framework per role, every job at once, each
// checked against a single-process computation once it ends. It returns
// an error when a job failed or its output is wrong.
func run(ctx context.Context, cfg runConfig, stdout, stderr io.Writer) error {
	logger := hclog.New(&hclog.LoggerOptions{Name: "mapreduce", Output: stderr, Level: hclog.LevelFromString(cfg.logLevel)})
	out := &printer{w: stdout}
	ctx, cancel := context.WithTimeout(ctx, cfg.deadline)
	defer cancel()

	jobs, roles, err := newJobs(cfg)
	if err != nil {
		return err
	}
	prog := newProgress(out, cfg.quiet)
	for _, j := range jobs {
		if j.output != "" {
			if err := prepareOutput(j.output); err != nil {
				return fmt.Errorf("%s: %w", j.spec.ID, err)
			}
		}
		prog.job(j.spec.ID, j.spec.Maps, j.spec.Reducers)
	}
	rolesWord := "roles"
	if len(roles) == 1 {
		rolesWord = "role"
	}
	out.printf("mapreduce: %s in %s %s; tasks of %s run %s\n", plural(len(jobs), "job"), rolesWord,
		strings.Join(roles, ", "), cfg.demand, cfg.workerPath)
	runs, stop, err := startRoles(ctx, cfg, roles, out, prog, logger)
	defer stop()
	if err != nil {
		return err
	}
	reports := runJobs(ctx, cfg, jobs, runs, prog, out)
	prog.clearLine()
	var failed []string
	var remote, partitions int
	for _, rep := range reports {
		if rep.err != nil {
			failed = append(failed, rep.job.spec.ID)
		}
		remote += rep.shuffle().Remote
		partitions += rep.shuffle().Partitions
	}
	for _, role := range roles {
		out.printf("%s", roleSummary(role, runs[role].f.Stats(), cfg.demand))
	}
	out.printf("shuffle: %d of %d partition files fetched from other agents\n", remote, partitions)
	teardown(runs, roles, logger)
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, reports); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if len(failed) > 0 {
		out.printf("FAILED: %d of %d jobs: %s\n", len(failed), len(jobs), strings.Join(failed, ", "))
		return fmt.Errorf("%d of %d jobs failed", len(failed), len(jobs))
	}
	if cfg.verify {
		out.printf("all jobs verified (%d)\n", len(jobs))
	} else {
		out.printf("all jobs finished (%d)\n", len(jobs))
	}
	return nil
}

// runJobs submits every job at once and returns their reports, printing
// each as its job ends.
func runJobs(ctx context.Context, cfg runConfig, jobs []*runJob, runs map[string]*roleRun, prog *progress, out *printer) []jobReport {
	reports := make([]jobReport, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		r := runs[j.spec.Role]
		if err := r.f.Submit(ctx, r.f.dagJob(j)); err != nil {
			reports[i] = jobReport{job: j, role: j.spec.Role, demand: cfg.demand, err: fmt.Errorf("submit: %w", err)}
			prog.clearLine()
			out.printf("%s", reports[i])
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = finishJob(ctx, j, r, cfg)
			prog.clearLine()
			out.printf("%s", reports[i])
		}()
	}
	wg.Wait()
	return reports
}

// newJobs returns the run's jobs, each with its input (job i generates
// from seed+i) and, for sorts, partition boundaries sampled from it, and
// the roles they run in, in order of appearance.
func newJobs(cfg runConfig) ([]*runJob, []string, error) {
	jobs := make([]*runJob, len(cfg.jobs))
	var roles []string
	for i, spec := range cfg.jobs {
		j := &runJob{spec: spec, src: source{kind: spec.Kind, paths: cfg.input, seed: cfg.seed + uint64(i), size: spec.Size},
			output: jobOutputDir(cfg, spec)}
		if spec.Kind == sortJob && spec.Reducers > 1 {
			b, err := sampleBounds(j.src, spec.Reducers, j.src.seed)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: sampling the input: %w", spec.ID, err)
			}
			j.bounds = b
		}
		jobs[i] = j
		if !slices.Contains(roles, spec.Role) {
			roles = append(roles, spec.Role)
		}
	}
	return jobs, roles, nil
}

// startRoles starts one framework per role and waits until each has
// subscribed. stop ends them (call it even on error).
func startRoles(ctx context.Context, cfg runConfig, roles []string, out *printer, prog *progress, logger hclog.Logger) (map[string]*roleRun, func(), error) {
	runs := map[string]*roleRun{}
	runCtx, stopRuns := context.WithCancel(context.Background())
	stop := func() {
		stopRuns()
		for _, r := range runs {
			<-r.done
			r.f.Close()
		}
	}
	progress := out
	if cfg.quiet {
		progress = &printer{w: io.Discard}
	}
	for _, role := range roles {
		f, err := newRoleFramework(role, cfg.workerPath, cfg.demand, progress, prog, dag.WithLogger(logger.Named(role)),
			dag.WithAltruism(cfg.altruism), dag.WithSeed(cfg.seed), dag.WithMaxAttempts(maxAttempts))
		if err != nil {
			return runs, stop, err
		}
		opts := []framework.Option{framework.WithNATSURLs(cfg.nats...), framework.WithName("mapreduce-" + role),
			framework.WithRole(role), framework.WithFailoverTimeout(cfg.failover), framework.WithLogger(logger.Named(role))}
		opts = append(opts, framework.CredentialsFromEnv()...)
		if cfg.prefix != "" {
			opts = append(opts, framework.WithSubjectPrefix(cfg.prefix))
		}
		d, err := framework.NewDriver(f, opts...)
		if err != nil {
			f.Close()
			return runs, stop, err
		}
		r := &roleRun{f: f, d: d, done: make(chan error, 1)}
		runs[role] = r
		go func() { r.done <- d.Run(runCtx) }()
	}
	for _, role := range roles {
		r := runs[role]
		select {
		case <-r.d.Ready():
		case err := <-r.done:
			r.done <- err
			return runs, stop, fmt.Errorf("framework %s: %w", role, err)
		case <-ctx.Done():
			return runs, stop, fmt.Errorf("framework %s: not subscribed: %w", role, ctx.Err())
		}
		out.printf("framework mapreduce-%s subscribed as %s in role %s\n", role, r.d.ID(), role)
	}
	return runs, stop, nil
}

// finishJob waits for job j, collects its counters, commits its output
// and, with --verify, checks it.
func finishJob(ctx context.Context, j *runJob, r *roleRun, cfg runConfig) jobReport {
	rep := jobReport{job: j, role: r.f.role, demand: cfg.demand}
	_, err := r.f.Wait(ctx, j.spec.ID)
	r.f.shuffles.jobEnded(j.spec.ID)
	rep.res, rep.ended, _ = r.f.Result(j.spec.ID)
	if errors.Is(err, context.DeadlineExceeded) {
		err = errors.New("not finished by the deadline (--deadline)")
	}
	if err != nil {
		rep.err = err
		return rep
	}
	rep.mapAgents = r.f.mapAgents(j.spec.ID)
	files := newFileClient(r.d.FilesToken())
	if rep.stages, err = collectCounters(ctx, j, r.f, files); err != nil {
		rep.err = err
		return rep
	}
	if j.output != "" {
		if rep.err = commitOutput(j.output, j.spec.Reducers); rep.err != nil {
			return rep
		}
		rep.outputs = []string{j.output}
	} else {
		rep.outputs = sandboxOutputs(j, r.f)
	}
	if cfg.verify {
		rep.verified = true
		rep.verdict, rep.err = verify(ctx, j, r.f, files)
	}
	return rep
}

// teardown removes the frameworks from the master, which kills whatever
// they still run and lets the agents clean their sandboxes up.
func teardown(runs map[string]*roleRun, roles []string, logger hclog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, role := range roles {
		if err := runs[role].d.Teardown(ctx); err != nil {
			logger.Warn("teardown", "role", role, "error", err)
		}
	}
}
