//go:build linux

package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
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

// shellTask is a task running script with /bin/sh, with 100 milli-CPUs
// and 64 MiB.
func shellTask(id, script string) protocol.TaskInfo {
	return protocol.TaskInfo{
		TaskID:    protocol.TaskID(id),
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 100, protocol.ResMem: 64}),
		Command:   protocol.CommandInfo{Shell: true, Value: script},
	}
}

// waitScript is a task script that waits until the file "go" appears in
// its sandbox, then prints "done" and exits 0.
const waitScript = `echo started; while [ ! -e go ]; do sleep 0.02; done; echo done`

// usedOffers holds offers accepted behind their framework's back (see
// launchGroup), which it still lists as outstanding.
var usedOffers sync.Map

// offerOn waits for an outstanding offer of agent id that holds the
// tasks' resources.
func offerOn(t *testing.T, f *testcluster.TestFramework, id protocol.AgentID, tasks ...protocol.TaskInfo) protocol.Offer {
	t.Helper()
	var need protocol.Resources
	for _, ti := range tasks {
		need.AddInPlace(ti.Resources)
	}
	var offer protocol.Offer
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, o := range f.Offers() {
			if _, used := usedOffers.Load(o.ID); !used && o.AgentID == id && o.Resources.Contains(need) {
				offer = o
				return nil
			}
		}
		return fmt.Errorf("no offer on agent %s", id)
	})
	return offer
}

// launch launches tasks on an offer of agent id, on another offer if that
// one expired meanwhile.
func launch(t *testing.T, f *testcluster.TestFramework, id protocol.AgentID, tasks ...protocol.TaskInfo) {
	t.Helper()
	retryOffers(t, func() error { return f.Launch(offerOn(t, f, id, tasks...), tasks...) })
}

// retryOffers runs accept until it is not refused for a stale offer, nor
// sent while no leader listened (the masters may elect under load; nobody
// received that accept, and the next offer comes from the new leader).
func retryOffers(t *testing.T, accept func() error) {
	t.Helper()
	for range 10 {
		err := accept()
		if errors.Is(err, protocol.ErrUnknownOffer) || errors.Is(err, protocol.ErrOfferRescinded) ||
			errors.Is(err, nats.ErrNoResponders) {
			continue
		}
		if err != nil {
			t.Fatalf("launch: %v", err)
		}
		return
	}
	t.Fatal("launch: every offer tried was stale")
}

// waitState waits for a task status of state st and returns it.
func waitState(t *testing.T, f *testcluster.TestFramework, id string, st protocol.TaskState) protocol.TaskStatus {
	t.Helper()
	var out protocol.TaskStatus
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, s := range f.Statuses(protocol.TaskID(id)) {
			if s.State == st {
				out = s
				return nil
			}
		}
		return fmt.Errorf("task %s: got %v, want %s", id, states(f.Statuses(protocol.TaskID(id))), st)
	})
	return out
}

func states(sts []protocol.TaskStatus) []protocol.TaskState {
	out := make([]protocol.TaskState, len(sts))
	for i, s := range sts {
		out[i] = s.State
	}
	return out
}

// uniqueStates returns the states of a task's statuses with repeated
// deliveries of one update (same UUID) counted once.
func uniqueStates(sts []protocol.TaskStatus) []protocol.TaskState {
	seen := map[protocol.StatusUUID]bool{}
	var out []protocol.TaskState
	for _, s := range sts {
		if !seen[s.UUID] {
			seen[s.UUID] = true
			out = append(out, s.State)
		}
	}
	return out
}

// countState counts the distinct updates (UUIDs) and the deliveries of a
// state.
func countState(sts []protocol.TaskStatus, st protocol.TaskState) (updates, deliveries int) {
	seen := map[protocol.StatusUUID]bool{}
	for _, s := range sts {
		if s.State != st {
			continue
		}
		deliveries++
		if !seen[s.UUID] {
			seen[s.UUID] = true
			updates++
		}
	}
	return updates, deliveries
}

// sandboxOf returns a task's sandbox name from the agent's /v1/state.
func sandboxOf(t *testing.T, a *agentProc, fw protocol.FrameworkID, id string) string {
	t.Helper()
	var st StateResponse
	getJSON(t, "http://"+a.HTTPAddr()+"/v1/state", "", &st)
	for _, ts := range st.Tasks {
		if ts.FrameworkID == fw && ts.TaskID == protocol.TaskID(id) {
			return ts.Sandbox
		}
	}
	t.Fatalf("task %s not in the agent's state", id)
	return ""
}

// readFile downloads a sandbox file through the agent's file server.
func readFile(t *testing.T, a *agentProc, path, token string) (int, string) {
	t.Helper()
	u := "http://" + a.HTTPAddr() + "/v1/files/download?path=" + url.QueryEscape(path)
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func getJSON(t *testing.T, u, token string, into any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// touch creates a file in a task's sandbox.
func touch(t *testing.T, a *Agent, sandbox, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(a.SandboxRoot(), sandbox, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// publish sends a command to the agent as the leader would.
func publish(t *testing.T, nc *nats.Conn, c *testcluster.Cluster, id protocol.AgentID, typ protocol.MsgType, body any) {
	t.Helper()
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	publishRaw(t, nc, c, id, data)
}

func publishRaw(t *testing.T, nc *nats.Conn, c *testcluster.Cluster, id protocol.AgentID, data []byte) {
	t.Helper()
	subject, err := c.Subjects().AgentCmd("", id)
	if err != nil {
		t.Fatal(err)
	}
	// Stamped with the serving leader's term, as the leader's commands are:
	// the agent drops commands of older terms.
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(protocol.TermHeader, strconv.FormatUint(c.WaitForLeader().Raft().Term(), 10))
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// agentTask returns the agent's summary of a task.
func agentTask(a *Agent, fw protocol.FrameworkID, id string) (TaskSummary, bool) {
	for _, ts := range a.State().Tasks {
		if ts.FrameworkID == fw && ts.TaskID == protocol.TaskID(id) {
			return ts, true
		}
	}
	return TaskSummary{}, false
}

// waitAgentTask waits until the agent reports a task in state st.
func waitAgentTask(t *testing.T, a *Agent, fw protocol.FrameworkID, id string, st protocol.TaskState) TaskSummary {
	t.Helper()
	var out TaskSummary
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		ts, ok := agentTask(a, fw, id)
		if !ok || ts.State != st {
			return fmt.Errorf("task %s on the agent: got %+v, want %s", id, ts, st)
		}
		out = ts
		return nil
	})
	return out
}

// testutilWaitFor polls check for up to wait.
func testutilWaitFor(t *testing.T, check func() error) {
	t.Helper()
	testutil.WaitFor(t, wait, 5*time.Millisecond, check)
}
