package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	flag "github.com/spf13/pflag"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/protocol"
)

// runConfig is what `mapreduce run` was asked to do.
type runConfig struct {
	nats       []string
	jobs       []jobSpec
	input      string
	seed       uint64
	demand     protocol.Resources
	altruism   float64
	deadline   time.Duration
	failover   time.Duration
	logLevel   string
	prefix     string
	quiet      bool
	workerPath string
}

// parseRun reads the flags of `mapreduce run`.
func parseRun(argv []string, stderr io.Writer) (runConfig, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nats := fs.String("nats", os.Getenv("ALLOT_NATS"), "NATS URLs of the cluster, comma-separated (default $ALLOT_NATS, as allot dev suggests)")
	jobs := fs.String("jobs", "", "job mix: comma-separated KIND[:SIZE][@ROLE], KIND wordcount or sort, no SIZE with --input (default "+defaultJobs+")")
	input := fs.String("input", "", "input directory, read by every job instead of a generated corpus (one machine only)")
	seed := fs.Uint64("seed", 1, "seed of the generated corpora (job i uses seed+i-1)")
	size := fs.String("size", "", "run one job on a generated corpus of this size, e.g. 4MB")
	maps := fs.Int("maps", 0, "map tasks per job (default: one per 256KB of input, 2 to 8)")
	reducers := fs.Int("reducers", 0, "reduce tasks per job (default: one per two maps, 1 to 4)")
	role := fs.String("role", "", "role of jobs that name none (default: they alternate between analytics and batch)")
	sortKind := fs.Bool("sort", false, "with --size or --input and no --jobs: run a sort instead of a word count")
	alt := fs.Float64("altruism", 1, "P(altruism) of every job, in [0, 1]")
	deadline := fs.Duration("deadline", 2*time.Minute, "give up on jobs not finished by then")
	cpus := fs.Int64("cpus", 500, "milli-CPUs of each task")
	mem := fs.Int64("mem", 64, "MiB of memory of each task")
	failover := fs.Duration("failover-timeout", 30*time.Second, "how long the master keeps the frameworks' tasks should this process go away")
	quiet := fs.Bool("quiet", false, "print only the jobs' reports, not every task that finishes")
	prefix := fs.String("subject-prefix", "", "the cluster's NATS subject prefix (default: the SDK's)")
	logLevel := fs.String("log-level", "warn", "log level of the SDK and the DAG scheduler (to stderr)")
	if err := fs.Parse(argv); err != nil {
		return runConfig{}, err
	}
	if fs.NArg() > 0 {
		return runConfig{}, fmt.Errorf("run: unexpected arguments %q", fs.Args())
	}
	cfg := runConfig{seed: *seed, input: *input, altruism: *alt, deadline: *deadline, failover: *failover,
		logLevel: *logLevel, prefix: *prefix, quiet: *quiet, demand: protocol.Scalars(map[string]int64{protocol.ResCPUs: *cpus, protocol.ResMem: *mem})}
	for u := range strings.SplitSeq(*nats, ",") {
		if u = strings.TrimSpace(u); u != "" {
			cfg.nats = append(cfg.nats, u)
		}
	}
	if len(cfg.nats) == 0 {
		return runConfig{}, errors.New("run: --nats is required")
	}
	if err := cfg.demand.Validate(); err != nil || *cpus <= 0 || *mem <= 0 {
		return runConfig{}, fmt.Errorf("run: task resources %s", cfg.demand)
	}
	if !(*alt >= 0 && *alt <= 1) {
		return runConfig{}, fmt.Errorf("run: --altruism %v outside [0, 1]", *alt)
	}
	var err error
	switch {
	case *jobs != "":
		cfg.jobs, err = parseJobs(*jobs, *role)
	case *size != "" || *input != "":
		kind := wordCount
		if *sortKind {
			kind = sortJob
		}
		spec := string(kind)
		if *size != "" {
			spec += ":" + *size
		}
		cfg.jobs, err = parseJobs(spec, cmp.Or(*role, roleAnalytics))
	default:
		cfg.jobs, err = parseJobs(defaultJobs, *role)
	}
	if err != nil {
		return runConfig{}, fmt.Errorf("run: %w", err)
	}
	if cfg.input != "" {
		if cfg.input, err = filepath.Abs(cfg.input); err != nil {
			return runConfig{}, err
		}
		n, err := inputSize(cfg.input)
		if err != nil {
			return runConfig{}, fmt.Errorf("run: %w", err)
		}
		for i := range cfg.jobs {
			cfg.jobs[i].Size = n
		}
	}
	for _, j := range cfg.jobs {
		if j.Size == 0 && cfg.input == "" {
			return runConfig{}, fmt.Errorf("run: job %s has no size: give one, or --input", j.ID)
		}
	}
	for i := range cfg.jobs {
		cfg.jobs[i] = cfg.jobs[i].withTasks(*maps, *reducers)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return runConfig{}, fmt.Errorf("run: the worker binary: %w", err)
	}
	cfg.workerPath = exe
	return cfg, nil
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
	rolesWord := "roles"
	if len(roles) == 1 {
		rolesWord = "role"
	}
	out.printf("mapreduce: %s in %s %s; tasks of %s run %s\n", plural(len(jobs), "job"), rolesWord,
		strings.Join(roles, ", "), cfg.demand, cfg.workerPath)
	runs, stop, err := startRoles(ctx, cfg, roles, out, logger)
	defer stop()
	if err != nil {
		return err
	}

	reports := make([]jobReport, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		r := runs[j.spec.Role]
		if err := r.f.Submit(ctx, r.f.dagJob(j)); err != nil {
			reports[i] = jobReport{job: j, role: j.spec.Role, demand: cfg.demand, err: fmt.Errorf("submit: %w", err)}
			out.printf("%s", reports[i])
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = finishJob(ctx, j, r, cfg.demand)
			out.printf("%s", reports[i])
		}()
	}
	wg.Wait()

	var failed []string
	var remote, partitions int
	for _, rep := range reports {
		if rep.err != nil {
			failed = append(failed, rep.job.spec.ID)
		}
		remote += rep.shuffle.Remote
		partitions += rep.shuffle.Partitions
	}
	for _, role := range roles {
		out.printf("%s", roleSummary(role, runs[role].f.Stats(), cfg.demand))
	}
	out.printf("shuffle: %d of %d partition files fetched from other agents\n", remote, partitions)
	teardown(runs, roles, logger)
	if len(failed) > 0 {
		out.printf("FAILED: %d of %d jobs: %s\n", len(failed), len(jobs), strings.Join(failed, ", "))
		return fmt.Errorf("%d of %d jobs failed", len(failed), len(jobs))
	}
	out.printf("all jobs verified (%d)\n", len(jobs))
	return nil
}

// newJobs returns the run's jobs, each with its input (job i generates
// from seed+i) and, for sorts, partition boundaries sampled from it, and
// the roles they run in, in order of appearance.
func newJobs(cfg runConfig) ([]*runJob, []string, error) {
	jobs := make([]*runJob, len(cfg.jobs))
	var roles []string
	for i, spec := range cfg.jobs {
		j := &runJob{spec: spec, src: source{kind: spec.Kind, dir: cfg.input, seed: cfg.seed + uint64(i), size: spec.Size}}
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
func startRoles(ctx context.Context, cfg runConfig, roles []string, out *printer, logger hclog.Logger) (map[string]*roleRun, func(), error) {
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
		f, err := newRoleFramework(role, cfg.workerPath, cfg.demand, progress, dag.WithLogger(logger.Named(role)),
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

// finishJob waits for job j and checks its output.
func finishJob(ctx context.Context, j *runJob, r *roleRun, demand protocol.Resources) jobReport {
	rep := jobReport{job: j, role: r.f.role, demand: demand}
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
	rep.verdict, rep.shuffle, rep.err = verify(ctx, j, r.f, newFileClient(r.d.FilesToken()))
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
