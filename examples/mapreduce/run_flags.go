package main

import (
	"cmp"
	"errors"
	"fmt"
	flag "github.com/spf13/pflag"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/allot-project/allot/protocol"
)

// runFlags are the flags of `mapreduce run`, before they are checked.
type runFlags struct {
	fs                                       *flag.FlagSet
	nats, jobs, input, size, splitSize, role *string
	output, jsonPath, prefix, logLevel       *string
	seed                                     *uint64
	maps, reducers                           *int
	sortKind, verify, quiet                  *bool
	alt                                      *float64
	deadline, failover                       *time.Duration
	cpus, mem                                *int64
}

func newRunFlags(stderr io.Writer) *runFlags {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &runFlags{fs: fs,
		nats:      fs.String("nats", os.Getenv("ALLOT_NATS"), "NATS URLs of the cluster, comma-separated (default $ALLOT_NATS, as allot dev suggests)"),
		jobs:      fs.String("jobs", "", "job mix: comma-separated KIND[:SIZE][@ROLE], KIND wordcount or sort, no SIZE with --input (default "+defaultJobs+")"),
		input:     fs.String("input", "", "input files and directories, comma-separated, read by every job instead of a generated corpus (every agent must see them at these paths)"),
		seed:      fs.Uint64("seed", 1, "seed of the generated corpora (job i uses seed+i-1)"),
		size:      fs.String("size", "", "run one job on a generated corpus of this size, e.g. 4MB"),
		splitSize: fs.String("split-size", "", "input per map task (default 128MB; 1MB for the default job mix)"),
		maps:      fs.Int("maps", 0, "map tasks per job (default: one per --split-size of input)"),
		reducers:  fs.Int("reducers", 0, "reduce tasks per job (default: one per two maps, 1 to 16)"),
		role:      fs.String("role", "", "role of jobs that name none (default: they alternate between analytics and batch)"),
		sortKind:  fs.Bool("sort", false, "with --size or --input and no --jobs: run a sort instead of a word count"),
		output:    fs.String("output", "", "directory for the results: one file per reducer and _SUCCESS (several jobs: a directory per job in it); it must not exist or be empty (default: the results stay in the reducers' sandboxes)"),
		verify:    fs.Bool("verify", false, "check every job's output against a single-process computation over its input"),
		jsonPath:  fs.String("json", "", "also write the jobs' reports, with their counters, as JSON to this file"),
		alt:       fs.Float64("altruism", 1, "P(altruism) of every job, in [0, 1]"),
		deadline:  fs.Duration("deadline", 30*time.Minute, "give up on jobs not finished by then"),
		cpus:      fs.Int64("cpus", 500, "milli-CPUs of each task"),
		mem:       fs.Int64("mem", 64, "MiB of memory of each task: it bounds the task's buffers and the Go runtime's memory"),
		failover:  fs.Duration("failover-timeout", 30*time.Second, "how long the master keeps the frameworks' tasks should this process go away"),
		quiet:     fs.Bool("quiet", false, "print only the jobs' reports, not progress"),
		prefix:    fs.String("subject-prefix", "", "the cluster's NATS subject prefix (default: the SDK's)"),
		logLevel:  fs.String("log-level", "warn", "log level of the SDK and the DAG scheduler (to stderr)"),
	}
}

// parseRun reads the flags of `mapreduce run`.
func parseRun(argv []string, stderr io.Writer) (runConfig, error) {
	f := newRunFlags(stderr)
	if err := f.fs.Parse(argv); err != nil {
		return runConfig{}, err
	}
	if f.fs.NArg() > 0 {
		return runConfig{}, fmt.Errorf("run: unexpected arguments %q", f.fs.Args())
	}
	cfg := runConfig{seed: *f.seed, altruism: *f.alt, deadline: *f.deadline, failover: *f.failover,
		verify: *f.verify, logLevel: *f.logLevel, prefix: *f.prefix, quiet: *f.quiet, nats: splitList(*f.nats),
		demand: protocol.Scalars(map[string]int64{protocol.ResCPUs: *f.cpus, protocol.ResMem: *f.mem})}
	if len(cfg.nats) == 0 {
		return runConfig{}, errors.New("run: --nats is required")
	}
	if err := cfg.demand.Validate(); err != nil || *f.cpus <= 0 || *f.mem <= 0 {
		return runConfig{}, fmt.Errorf("run: task resources %s", cfg.demand)
	}
	if !(*f.alt >= 0 && *f.alt <= 1) {
		return runConfig{}, fmt.Errorf("run: --altruism %v outside [0, 1]", *f.alt)
	}
	if err := cfg.parseJobs(f); err != nil {
		return runConfig{}, fmt.Errorf("run: %w", err)
	}
	var err error
	for _, p := range []*string{f.output, f.jsonPath} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				return runConfig{}, fmt.Errorf("run: %w", err)
			}
		}
	}
	cfg.output, cfg.jsonPath = *f.output, *f.jsonPath
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

// parseJobs sets the run's jobs, their input and their task counts.
func (cfg *runConfig) parseJobs(f *runFlags) error {
	var err error
	cfg.splitSize = defaultSplitSize
	switch {
	case *f.jobs != "":
		cfg.jobs, err = parseJobs(*f.jobs, *f.role)
	case *f.size != "" || *f.input != "":
		kind := wordCount
		if *f.sortKind {
			kind = sortJob
		}
		spec := string(kind)
		if *f.size != "" {
			spec += ":" + *f.size
		}
		cfg.jobs, err = parseJobs(spec, cmp.Or(*f.role, roleAnalytics))
	default:
		cfg.jobs, err = parseJobs(defaultJobs, *f.role)
		cfg.splitSize = demoSplitSize
	}
	if err != nil {
		return err
	}
	if *f.splitSize != "" {
		if cfg.splitSize, err = parseSize(*f.splitSize); err != nil || cfg.splitSize <= 0 {
			return fmt.Errorf("--split-size %q: want a positive size such as 64MB", *f.splitSize)
		}
	}
	for _, p := range splitList(*f.input) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		cfg.input = append(cfg.input, abs)
	}
	if len(cfg.input) > 0 {
		n, err := inputSize(cfg.input)
		if err != nil {
			return err
		}
		for i := range cfg.jobs {
			cfg.jobs[i].Size = n
		}
	}
	for i, j := range cfg.jobs {
		if j.Size == 0 && len(cfg.input) == 0 {
			return fmt.Errorf("job %s has no size: give one, or --input", j.ID)
		}
		cfg.jobs[i] = j.withTasks(*f.maps, *f.reducers, cfg.splitSize)
	}
	return nil
}
