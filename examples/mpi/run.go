package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	flag "github.com/spf13/pflag"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// The framework: `mpi run`.

// runConfig is what `mpi run` is asked to do.
type runConfig struct {
	nats      []string
	name      string
	role      string
	ranks     int
	placement string // placeSpread or placeRack
	rack      string
	vectorLen int
	intervals int
	deadline  time.Duration // to place the gang
	timeout   time.Duration // the whole run
	cpus      int64
	mem       int64
	logLevel  string
}

// envNATS names the cluster's NATS URLs when --nats is not given, as
// `allot dev` suggests.
const envNATS = "ALLOT_NATS"

// Placements.
const (
	placeSpread = "spread" // one rank per agent: unique hostname
	placeRack   = "rack"   // every rank in one rack: same rack
)

// Exit statuses of `mpi run`.
const (
	exitVerified = 0
	exitFailed   = 1 // not placed, a rank failed, or results that do not check
	exitUsage    = 2
)

func parseRun(args []string, stderr io.Writer) (runConfig, error) {
	var cfg runConfig
	fs := flag.NewFlagSet("mpi run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaultNATS := "nats://127.0.0.1:4222"
	if v := os.Getenv(envNATS); v != "" {
		defaultNATS = v
	}
	nats := fs.String("nats", defaultNATS, "NATS URLs of the cluster, comma-separated (default $"+envNATS+" when set)")
	fs.StringVar(&cfg.name, "name", "mpi", "framework name")
	fs.StringVar(&cfg.role, "role", "", "role to join (default: the cluster's default role)")
	fs.IntVar(&cfg.ranks, "ranks", 3, "number of ranks")
	fs.StringVar(&cfg.placement, "placement", placeSpread, "spread: one rank per agent; rack: all ranks in one rack")
	fs.StringVar(&cfg.rack, "rack", "", "only agents of this rack (either placement)")
	fs.IntVar(&cfg.vectorLen, "vector-len", 1000, "elements of the vector to allreduce")
	fs.IntVar(&cfg.intervals, "intervals", 100000, "intervals of the pi integration, over all ranks")
	fs.DurationVar(&cfg.deadline, "deadline", 30*time.Second, "time to place the gang before giving up")
	fs.DurationVar(&cfg.timeout, "timeout", 2*time.Minute, "deadline of the whole run")
	fs.Int64Var(&cfg.cpus, "cpus", 200, "milli-CPUs of each rank")
	fs.Int64Var(&cfg.mem, "mem", 64, "MiB of memory of each rank")
	fs.StringVar(&cfg.logLevel, "log-level", "warn", "framework log level (trace, debug, info, warn, error)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, u := range strings.Split(*nats, ",") {
		if u = strings.TrimSpace(u); u != "" {
			cfg.nats = append(cfg.nats, u)
		}
	}
	switch {
	case len(cfg.nats) == 0:
		return cfg, errors.New("--nats: no URL")
	case cfg.placement != placeSpread && cfg.placement != placeRack:
		return cfg, fmt.Errorf("--placement %q: want %s or %s", cfg.placement, placeSpread, placeRack)
	case cfg.deadline <= 0 || cfg.timeout <= cfg.deadline:
		return cfg, fmt.Errorf("--deadline %s, --timeout %s: want 0 < deadline < timeout", cfg.deadline, cfg.timeout)
	case cfg.cpus <= 0 || cfg.mem <= 0:
		return cfg, errors.New("--cpus and --mem must be positive")
	}
	return cfg, checkSizes(cfg.ranks, cfg.vectorLen, cfg.intervals)
}

// constraints are the gang's: its group operator and the rack filter.
func (cfg runConfig) constraints() []protocol.Constraint {
	var out []protocol.Constraint
	if cfg.placement == placeSpread {
		out = append(out, protocol.Constraint{Attribute: "hostname", Op: protocol.OpUnique})
	} else {
		out = append(out, protocol.Constraint{Attribute: "rack", Op: protocol.OpSame})
	}
	if cfg.rack != "" {
		out = append(out, protocol.Constraint{Attribute: "rack", Op: protocol.OpEq, Value: cfg.rack})
	}
	return out
}

// describe says in words where the ranks must go.
func (cfg runConfig) describe() string {
	s := "one rank per agent (unique hostname)"
	if cfg.placement == placeRack {
		s = "all ranks in one rack (same rack)"
	}
	if cfg.rack != "" {
		s += ", rack == " + cfg.rack
	}
	return s
}

// rankTasks are the gang's tasks: this program, as `mpi rank`.
func (cfg runConfig) rankTasks(self string) []protocol.TaskInfo {
	tasks := make([]protocol.TaskInfo, cfg.ranks)
	for r := range tasks {
		b := framework.NewTask(rankID(r), self, "rank",
			"--vector-len", strconv.Itoa(cfg.vectorLen), "--intervals", strconv.Itoa(cfg.intervals),
			"--timeout", cfg.timeout.String()).
			Name(fmt.Sprintf("mpi rank %d of %d", r, cfg.ranks)).
			CPUs(cfg.cpus).Mem(cfg.mem).
			Env(envRank, strconv.Itoa(r)).Env(envSize, strconv.Itoa(cfg.ranks)).
			Label("mpi.rank", strconv.Itoa(r)).KillGrace(2 * time.Second)
		// A race-enabled build lingers on exit unless told not to.
		if v := os.Getenv("GORACE"); v != "" {
			b.Env("GORACE", v)
		}
		tasks[r] = b.Build()
	}
	return tasks
}

// runMain runs `mpi run` and returns its exit status.
func runMain(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseRun(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitVerified
	}
	if err != nil {
		fmt.Fprintf(stderr, "mpi run: %v\n", err)
		return exitUsage
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: "mpi", Level: hclog.LevelFromString(cfg.logLevel), Output: stderr})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.Abs(self)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mpi run: cannot find this program for the ranks to run: %v\n", err)
		return exitFailed
	}
	return run(ctx, cfg, self, stdout, logger)
}
