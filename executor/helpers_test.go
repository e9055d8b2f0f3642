//go:build linux

package executor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// The test binary doubles as the task shim and as task helpers: the agent
// runs it with envShim set (Config.ShimEnv), and tasks run it with
// envHelper set in their command's environment.
const (
	envShim   = "ALLOT_EXECUTOR_TEST_SHIM"
	envHelper = "ALLOT_EXECUTOR_TEST_HELPER"
)

func TestMain(m *testing.M) {
	if os.Getenv(envShim) == "1" {
		os.Exit(runner.ShimMain(os.Args[1:]))
	}
	if h := os.Getenv(envHelper); h != "" {
		os.Exit(runHelper(h))
	}
	// Fails the tests if any leaves a goroutine running.
	goleak.VerifyTestMain(m)
}

// runHelper runs a task helper. "alloc" allocates and touches 4 MiB every
// 10 ms, up to 1 GiB, then idles until killed.
func runHelper(name string) int {
	if name != "alloc" {
		return 2
	}
	var hold [][]byte
	for range 256 {
		b := make([]byte, 4<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hold = append(hold, b)
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Minute)
	runtime.KeepAlive(hold)
	return 0
}

// wait bounds every wait in these tests.
const wait = 20 * time.Second

// newCluster starts three masters. Agents stay reachable for 30 s without
// heartbeats, so a stopped agent's tasks are not lost while it restarts.
// Offers expire after 2 s: a test framework forgets the offers it holds
// when it subscribes again after a leader announcement, and the master
// offers those resources again only once the forgotten offers expire.
func newCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	// Raft timeouts five times the test cluster's defaults: under the race
	// detector on a loaded machine the default ones let followers start
	// elections, and a launch that meets no leader fails these tests for
	// nothing they check.
	return testcluster.New(t, testcluster.Options{Masters: 3, AgentTimeout: 30 * time.Second, OfferTimeout: 2 * time.Second,
		HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond, LeaderLeaseTimeout: 250 * time.Millisecond})
}

// testConfig is an agent on c with fixed resources (4 CPUs, 2 GiB, ports
// 31000-31009), attribute rack=r1, portable isolation and the test binary
// as its shim.
func testConfig(t *testing.T, c *testcluster.Cluster, workDir string) Config {
	t.Helper()
	return Config{
		NATSURLs: []string{c.NATSURL()},
		WorkDir:  workDir,
		Hostname: "agent-test",
		Resources: protocol.Resources{
			Scalars: map[string]int64{protocol.ResCPUs: 4000, protocol.ResMem: 2048},
			Ranges:  map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 31009}}},
		},
		Attributes: protocol.Attributes{"rack": protocol.Text("r1")},
		Isolation:  runner.IsolationPortable,
		Shim:       []string{os.Args[0]},
		// The race runtime otherwise waits a second when a shim exits.
		ShimEnv:        []string{envShim + "=1", "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"},
		DefaultGrace:   time.Second,
		ResendInterval: 100 * time.Millisecond,
		RequestTimeout: time.Second,
		Logger:         testlog.New(t),
	}
}

// agentProc is one run of an agent.
type agentProc struct {
	*Agent
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startAgent runs an agent with cfg, waits until it is registered, and
// stops it when the test ends. Tasks left running in cfg.WorkDir are
// killed after that.
func startAgent(t *testing.T, cfg Config) *agentProc {
	t.Helper()
	p := runAgent(t, cfg)
	select {
	case <-p.Ready():
	case err := <-p.done:
		t.Fatalf("agent stopped before it was ready: %v", err)
	case <-time.After(wait):
		t.Fatal("agent not ready in time")
	}
	return p
}

// runAgent runs an agent with cfg without waiting for it.
func runAgent(t *testing.T, cfg Config) *agentProc {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cleanupWorkDir(t, a.SandboxRoot())
	ctx, cancel := context.WithCancel(context.Background())
	p := &agentProc{Agent: a, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- a.Run(ctx) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop cancels the agent's Run and waits for it to return.
func (p *agentProc) stop(t *testing.T) {
	t.Helper()
	p.once.Do(func() {
		p.cancel()
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("agent run: %v", err)
			}
		case <-time.After(wait):
			t.Error("agent did not stop in time")
		}
	})
}

var (
	cleanedMu sync.Mutex
	cleaned   = map[string]bool{}
)

// cleanupWorkDir registers, once per sandbox root, a cleanup that kills
// the tasks still running there and fails the test if a shim reported a
// data race or a panic. Registered before the agent's own cleanup, it
// runs after it.
func cleanupWorkDir(t *testing.T, root string) {
	t.Helper()
	cleanedMu.Lock()
	seen := cleaned[t.Name()+root]
	cleaned[t.Name()+root] = true
	cleanedMu.Unlock()
	if seen {
		return
	}
	t.Cleanup(func() {
		r, err := runner.New(runner.Config{WorkDir: root, Shim: []string{os.Args[0]}, Isolation: runner.IsolationPortable})
		if err != nil {
			t.Error(err)
			return
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			task, err := r.Reattach(context.Background(), e.Name())
			if err != nil {
				continue
			}
			_ = task.Kill()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			if _, err := task.Wait(ctx); err != nil {
				t.Errorf("task in %s did not end: %v", e.Name(), err)
			}
			cancel()
		}
		logs, _ := filepath.Glob(filepath.Join(filepath.Dir(root), controlDir, "*", "shim.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			if s := string(data); strings.Contains(s, "DATA RACE") || strings.Contains(s, "panic:") {
				t.Errorf("%s:\n%s", l, s)
			}
		}
	})
}
