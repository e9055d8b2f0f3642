// Package executors runs real agents (the executor package) in the test
// process against an internal/testcluster cluster. It is separate from
// testcluster only so that the executor package's own tests may use
// testcluster without an import cycle.
package executors

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// envShim marks a re-execution of the test binary as a task shim.
const envShim = "ALLOT_TESTCLUSTER_SHIM"

// Main is TestMain for packages that start executors: the real agent runs
// every task under a shim, which here is the test binary itself,
// re-executed. Use it as
//
//	func TestMain(m *testing.M) { executors.Main(m) }
func Main(m *testing.M) {
	ServeShim()
	os.Exit(m.Run())
}

// ServeShim runs the task shim and exits when this process is the test
// binary re-executed as one; otherwise it returns at once. Main calls it;
// a TestMain with more to do calls it first.
func ServeShim() {
	if os.Getenv(envShim) == "1" {
		os.Exit(runner.ShimMain(os.Args[1:]))
	}
}

// Options configures a real agent run in this process against a cluster.
type Options struct {
	// Hostname defaults to "executor-<n>", n counting this test's agents.
	Hostname string
	// Resources default to 4 CPUs, 2 GiB and ports 31000-31099.
	Resources  protocol.Resources
	Attributes protocol.Attributes
	// WorkDir defaults to a fresh temporary directory; a restart keeps it.
	WorkDir string
	// Configure adjusts the agent's configuration last.
	Configure func(*executor.Config)
}

// Executor is a real agent running in this process. Stop and Start it
// again to restart it on the same work directory, as an operator
// restarting `allot agent` would; its tasks run in their own processes
// and outlive it.
type Executor struct {
	t   testing.TB
	cfg executor.Config

	mu     sync.Mutex
	agent  *executor.Agent
	cancel context.CancelFunc
	done   chan error
}

var (
	countMu sync.Mutex
	counts  = map[string]int{}
)

// New starts a real agent against c and waits until it is registered. Its
// tasks are killed when the test ends.
func New(t testing.TB, c *testcluster.Cluster, opts Options) *Executor {
	t.Helper()
	countMu.Lock()
	n := counts[t.Name()]
	counts[t.Name()]++
	countMu.Unlock()
	if opts.Hostname == "" {
		opts.Hostname = "executor-" + strconv.Itoa(n)
	}
	if opts.Resources.IsEmpty() {
		opts.Resources = protocol.Resources{
			Scalars: map[string]int64{protocol.ResCPUs: 4000, protocol.ResMem: 2048},
			Ranges:  map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 31099}}},
		}
	}
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	cfg := executor.Config{
		NATSURLs: []string{c.NATSURL()}, SubjectPrefix: c.Subjects().Prefix, WorkDir: opts.WorkDir,
		Hostname: opts.Hostname, Resources: opts.Resources, Attributes: opts.Attributes,
		Isolation: runner.IsolationPortable, HTTPAddr: "127.0.0.1:0",
		// One secret for the cluster's agents, so tasks read their
		// framework's sandboxes on every agent.
		FilesSecret: c.FilesSecret(),
		Shim:        []string{os.Args[0]},
		// The race runtime otherwise waits a second whenever a shim exits.
		ShimEnv:      []string{envShim + "=1", "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"},
		DefaultGrace: time.Second, ResendInterval: 100 * time.Millisecond, RequestTimeout: time.Second,
		Logger: testlog.New(t).Named(opts.Hostname),
	}
	// Where the cluster authenticates, each agent has its own credential:
	// a secret, or a certificate naming it.
	cfg.Principal, cfg.Secret = c.NextAgentCredential()
	id := protocol.Identity{Kind: protocol.KindAgent, Name: protocol.PrincipalToken(cfg.Principal)}
	if ca, cert, key, ok := c.IdentityTLS(id); ok {
		cfg.NATSCA, cfg.NATSCert, cfg.NATSKey = ca, cert, key
		if c.Authenticating() {
			cfg.Secret = ""
		}
	}
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	e := &Executor{t: t, cfg: cfg}
	t.Cleanup(e.killTasks)
	e.Start()
	return e
}

// Start runs the agent (again) and waits until it is registered.
func (e *Executor) Start() {
	e.t.Helper()
	a, err := executor.New(e.cfg)
	if err != nil {
		e.t.Fatalf("executor %s: %v", e.cfg.Hostname, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	e.mu.Lock()
	e.agent, e.cancel, e.done = a, cancel, done
	e.mu.Unlock()
	select {
	case <-a.Ready():
	case err := <-done:
		e.t.Fatalf("executor %s stopped before registering: %v", e.cfg.Hostname, err)
	case <-time.After(testcluster.DefaultWait):
		e.t.Fatalf("executor %s not registered after %s", e.cfg.Hostname, testcluster.DefaultWait)
	}
}

// Stop stops the agent; its tasks keep running.
func (e *Executor) Stop() {
	e.mu.Lock()
	cancel, done := e.cancel, e.done
	e.cancel, e.done = nil, nil
	e.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			e.t.Errorf("executor %s: %v", e.cfg.Hostname, err)
		}
	case <-time.After(testcluster.DefaultWait):
		e.t.Errorf("executor %s did not stop after %s", e.cfg.Hostname, testcluster.DefaultWait)
	}
}

// Agent is the running agent (the latest one after a restart).
func (e *Executor) Agent() *executor.Agent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.agent
}

// ID is the agent's ID.
func (e *Executor) ID() protocol.AgentID { return e.Agent().ID() }

// WorkDir is where the agent keeps its checkpoint and sandboxes.
func (e *Executor) WorkDir() string { return e.cfg.WorkDir }

// killTasks stops the agent, then kills every task still running in its
// sandboxes and fails the test if a shim reported a data race or panic.
func (e *Executor) killTasks() {
	e.Stop()
	root := filepath.Join(e.cfg.WorkDir, "sandboxes")
	r, err := runner.New(runner.Config{WorkDir: root, Shim: e.cfg.Shim, Isolation: runner.IsolationPortable})
	if err != nil {
		e.t.Error(err)
		return
	}
	entries, _ := os.ReadDir(root)
	for _, ent := range entries {
		task, err := r.Reattach(context.Background(), ent.Name())
		if err != nil {
			continue
		}
		_ = task.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), testcluster.DefaultWait)
		if _, err := task.Wait(ctx); err != nil {
			e.t.Errorf("task in %s did not end: %v", ent.Name(), err)
		}
		cancel()
	}
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(root), "control", "*", "shim.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if s := string(data); strings.Contains(s, "DATA RACE") || strings.Contains(s, "panic:") {
			e.t.Errorf("%s:\n%s", l, s)
		}
	}
}
