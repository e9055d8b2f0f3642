package coflowbench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/devcluster"
	"github.com/allot-project/allot/sim/coflowsim"
)

// ErrConfig is an invalid Config.
var ErrConfig = errors.New("coflowbench: invalid config")

// Uncoordinated is the policy that registers no coflow: every receiver
// fetches everything at once, and the agents share their ports among the
// transfers round-robin.
const Uncoordinated = "uncoordinated"

// Config is a testbed run.
type Config struct {
	// Trace is the folded trace: its ports are the agents.
	Trace *coflowsim.Trace
	// Policies are the leader's coflow schedulers to run (philae, aalo,
	// fifo, ...) and Uncoordinated, each on a fresh cluster.
	Policies []string
	// Egress and Ingress are every agent's port capacities, bytes a
	// second: its shuffle egress (--shuffle-egress) and ingress
	// (--shuffle-ingress; 0: no limit; else the Egress, the only other
	// fabric the simulator models).
	Egress, Ingress int64
	// Slots is every agent's --shuffle-slots: enough for every transfer
	// to be served at once, so that the port's pacing orders them.
	Slots int
	// DataDir holds the clusters' data (a temporary directory if empty).
	DataDir string
	// Logger gets the clusters' logs (nil: none).
	Logger hclog.Logger
	// Configure, when set, adjusts each cluster's configuration last
	// (tests give the agents their task shim).
	Configure func(*devcluster.Config)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Trace == nil || len(c.Trace.Coflows) == 0:
		return fmt.Errorf("%w: no trace", ErrConfig)
	case c.Trace.Ports < 1 || c.Trace.Ports > devcluster.MaxAgents:
		return fmt.Errorf("%w: a trace of %d ports: fold it onto 1 to %d agents", ErrConfig, c.Trace.Ports, devcluster.MaxAgents)
	case len(c.Policies) == 0:
		return fmt.Errorf("%w: no policy", ErrConfig)
	case c.Egress <= 0 || c.Ingress < 0:
		return fmt.Errorf("%w: egress %d, ingress %d bytes a second", ErrConfig, c.Egress, c.Ingress)
	case c.Ingress != 0 && c.Ingress != c.Egress:
		// Report would have no prediction to put beside the runs.
		return fmt.Errorf("%w: ingress %d bytes a second: the simulator models receivers without a limit (0) or at the egress (%d)",
			ErrConfig, c.Ingress, c.Egress)
	case c.Slots < 1:
		return fmt.Errorf("%w: %d shuffle slots", ErrConfig, c.Slots)
	}
	return nil
}

// PolicyRun is one policy's replay.
type PolicyRun struct {
	Policy  string
	Coflows []coflowResult
	Elapsed time.Duration
}

// Run replays the trace under each policy in turn.
func Run(ctx context.Context, cfg Config) ([]PolicyRun, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	dir := cfg.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "allot-coflowbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	var out []PolicyRun
	for i, policy := range cfg.Policies {
		start := time.Now()
		res, err := runPolicy(ctx, cfg, policy, fmt.Sprintf("%s/%d-%s", dir, i, policy))
		if err != nil {
			return out, fmt.Errorf("%s: %w", policy, err)
		}
		out = append(out, PolicyRun{Policy: policy, Coflows: res, Elapsed: time.Since(start)})
	}
	return out, nil
}

// runPolicy starts a cluster for one policy, prepares the agents' blobs
// and replays the trace.
func runPolicy(ctx context.Context, cfg Config, policy, dir string) ([]coflowResult, error) {
	dc := devcluster.DefaultConfig()
	dc.DataDir, dc.Masters, dc.Agents = dir, 1, cfg.Trace.Ports
	dc.NATSPort, dc.HTTPPort, dc.RaftPort = 0, 0, 0
	dc.AgentShuffleSlots, dc.AgentShuffleEgress, dc.AgentShuffleIngress = cfg.Slots, cfg.Egress, cfg.Ingress
	if policy != Uncoordinated {
		dc.CoflowScheduler = policy
	}
	dc.Logger = cfg.Logger
	if cfg.Configure != nil {
		cfg.Configure(&dc)
	}
	c, err := devcluster.Start(ctx, dc)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p := newPreparer(cfg.Trace.Ports, largestFlow(cfg.Trace))
	d, err := framework.NewDriver(p, framework.WithNATSURLs(c.NATSURL()), framework.WithName("coflowbench"),
		framework.WithPrincipal(devcluster.DevPrincipal), framework.WithSecret(c.FrameworkSecret()),
		framework.WithLogger(cfg.Logger.Named("coflowbench")))
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	prepCtx, cancel := context.WithTimeout(ctx, time.Minute)
	agents, err := p.wait(prepCtx, d)
	cancel()
	if err != nil {
		return nil, err
	}
	r := &replayer{driver: d, agents: agents, token: d.FilesToken(), register: policy != Uncoordinated,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}
	res, err := r.run(ctx, cfg.Trace)
	tdCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = d.Teardown(tdCtx)
	cancel()
	stop()
	<-ran
	return res, err
}

// largestFlow is the largest flow's size: every agent's blob is as large.
func largestFlow(tr *coflowsim.Trace) int64 {
	var n int64 = 1
	for _, c := range tr.Coflows {
		for _, f := range c.Flows {
			n = max(n, f.Bytes)
		}
	}
	return n
}
