package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"time"

	flag "github.com/spf13/pflag"
)

// The rank program: what every task of the gang runs (`mpi rank`).

// Environment variables a rank reads: the first three set by the
// framework, the others by the agent.
const (
	envRoot      = "ALLOT_MPI_ROOT" // rank 0's address, host:port
	envRank      = "ALLOT_MPI_RANK"
	envSize      = "ALLOT_MPI_SIZE"
	envPort0     = "PORT0"            // the rank's first offered port: it listens there
	envAgentHTTP = "ALLOT_AGENT_HTTP" // the agent's address: its host is the rank's
)

// resultPrefix starts the line of rank 0's stdout that holds its result
// as JSON.
const resultPrefix = "result "

// rankConfig is what a rank is told.
type rankConfig struct {
	Rank, Size int
	// Root is rank 0's address; rank 0 listens on its port.
	Root string
	// Port is where this rank listens.
	Port int
	// Host is where the other ranks reach this one; empty: the local
	// address of its connection to rank 0.
	Host                 string
	VectorLen, Intervals int
	// Step bounds every network step: a connection, a read, a write.
	Step time.Duration
}

// result is what rank 0 reports.
type result struct {
	Size      int      `json:"size"`
	VectorLen int      `json:"vector_len"`
	Intervals int      `json:"intervals"`
	Checksum  float64  `json:"checksum"`
	Samples   []sample `json:"samples"`
	Pi        float64  `json:"pi"`
	// Agreed counts the ranks whose results were rank 0's.
	Agreed  int     `json:"agreed"`
	Seconds float64 `json:"seconds"`
}

// rankMain runs `mpi rank` and returns its exit status.
func rankMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mpi rank", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vectorLen := fs.Int("vector-len", 1000, "elements of the vector to allreduce")
	intervals := fs.Int("intervals", 100000, "intervals of the pi integration, over all ranks")
	timeout := fs.Duration("timeout", 2*time.Minute, "the whole rank's deadline")
	step := fs.Duration("step-timeout", 20*time.Second, "deadline of each network step")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := rankEnv(os.Getenv)
	if err == nil {
		cfg.VectorLen, cfg.Intervals, cfg.Step = *vectorLen, *intervals, *step
		err = checkSizes(cfg.Size, cfg.VectorLen, cfg.Intervals)
	}
	if err == nil && (*timeout <= 0 || *step <= 0) {
		err = errors.New("timeouts must be positive")
	}
	if err != nil {
		fmt.Fprintf(stderr, "mpi rank: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), *timeout,
		fmt.Errorf("rank deadline (%s) passed", *timeout))
	defer cancel()
	res, err := runRank(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "mpi rank %d of %d: %v\n", cfg.Rank, cfg.Size, err)
		return 1
	}
	if cfg.Rank == 0 {
		if err := writeResult(stdout, res); err != nil {
			fmt.Fprintf(stderr, "mpi rank 0: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "mpi rank %d of %d: done: checksum %.17g, pi %.17g\n", cfg.Rank, cfg.Size, res.Checksum, res.Pi)
	return 0
}

// rankEnv reads a rank's configuration from its environment.
func rankEnv(getenv func(string) string) (rankConfig, error) {
	var cfg rankConfig
	var err error
	atoi := func(key string) int {
		n, e := strconv.Atoi(getenv(key))
		if e != nil && err == nil {
			err = fmt.Errorf("%s=%q: want a number (the framework and the agent set it)", key, getenv(key))
		}
		return n
	}
	cfg.Rank, cfg.Size, cfg.Port = atoi(envRank), atoi(envSize), atoi(envPort0)
	cfg.Root = getenv(envRoot)
	if err != nil {
		return cfg, err
	}
	if cfg.Rank < 0 || cfg.Rank >= cfg.Size {
		return cfg, fmt.Errorf("rank %d of %d", cfg.Rank, cfg.Size)
	}
	if _, _, e := net.SplitHostPort(cfg.Root); e != nil {
		return cfg, fmt.Errorf("%s=%q: %w", envRoot, cfg.Root, e)
	}
	if host, _, e := net.SplitHostPort(getenv(envAgentHTTP)); e == nil && usableHost(host) {
		cfg.Host = host
	}
	return cfg, nil
}

// usableHost reports whether other machines can reach host: not empty and
// not a wildcard address.
func usableHost(host string) bool {
	if host == "" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsUnspecified()
}

// runRank takes part in the run as cfg.Rank and returns what it found.
func runRank(ctx context.Context, cfg rankConfig) (result, error) {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{Port: cfg.Port})
	if err != nil {
		return result{}, fmt.Errorf("listen on port %d: %w", cfg.Port, err)
	}
	return runRankOn(ctx, cfg, ln)
}

// runRankOn is runRank on a listener already open on cfg.Port; it closes
// it.
func runRankOn(ctx context.Context, cfg rankConfig, ln *net.TCPListener) (result, error) {
	start := time.Now()
	defer ln.Close()
	k := &rankRun{cfg: cfg, ln: ln}
	k.stop, _ = ctx.Deadline()
	// Ending ctx ends every wait: closed listener and connections fail.
	defer context.AfterFunc(ctx, k.closeAll)()
	defer k.closeAll()
	var rg *ring
	var err error
	if cfg.Rank == 0 {
		rg, err = k.rootConnect(ctx)
	} else {
		rg, err = k.memberConnect(ctx)
	}
	if err == nil {
		err = k.compute(rg)
	}
	if err == nil {
		err = k.gather()
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		return result{}, err
	}
	k.res.Seconds = time.Since(start).Seconds()
	return k.res, nil
}

// writeResult prints rank 0's result: readable lines, then the JSON line
// the framework reads.
func writeResult(w io.Writer, res result) error {
	fmt.Fprintf(w, "mpi rank 0 of %d: allreduce of %d elements: checksum %.17g\n", res.Size, res.VectorLen, res.Checksum)
	for _, s := range res.Samples {
		fmt.Fprintf(w, "mpi rank 0 of %d:   v[%d] = %.17g\n", res.Size, s.Index, s.Value)
	}
	fmt.Fprintf(w, "mpi rank 0 of %d: pi = %.15f (error vs math.Pi %.3g, %d intervals)\n",
		res.Size, res.Pi, math.Abs(res.Pi-math.Pi), res.Intervals)
	fmt.Fprintf(w, "mpi rank 0 of %d: %d of %d ranks agree, %.3fs\n", res.Size, res.Agreed, res.Size, res.Seconds)
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", resultPrefix, b)
	return err
}
