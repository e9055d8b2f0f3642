package devcluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// envShim makes the test binary the agents' task shim.
const envShim = "ALLOT_DEVCLUSTER_TEST_SHIM"

func TestMain(m *testing.M) {
	if os.Getenv(envShim) == "1" {
		os.Exit(runner.ShimMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// wait bounds every wait in these tests.
const wait = 20 * time.Second

// testConfig is a small cluster on free ports in dir.
func testConfig(t *testing.T, dir string, masters int) Config {
	cfg := DefaultConfig()
	cfg.DataDir = dir
	cfg.Masters, cfg.Agents = masters, 2
	cfg.AgentResources = protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 512})
	cfg.NATSPort, cfg.HTTPPort, cfg.RaftPort = 0, 0, 0
	cfg.Isolation = runner.IsolationPortable
	cfg.AgentShim = []string{os.Args[0]}
	cfg.AgentShimEnv = []string{envShim + "=1", "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"}
	cfg.StartTimeout = wait
	cfg.Logger = testlog.New(t)
	return cfg
}

// oneTask launches one task that exits 0 on the first offer that fits
// and reports its terminal status.
type oneTask struct {
	framework.NopScheduler
	// command is the task's shell command line ("true" if empty).
	command  string
	mu       sync.Mutex
	launched bool
	ended    chan protocol.TaskStatus
}

// runOneTask runs a framework named name on c that launches one task of
// the shell command line and returns the task's final status, which must
// be FINISHED. The framework runs until the test ends.
func runOneTask(t *testing.T, c *Cluster, name, command string) protocol.TaskStatus {
	t.Helper()
	sched := &oneTask{command: command, ended: make(chan protocol.TaskStatus, 1)}
	d, err := framework.NewDriver(sched, framework.WithNATSURLs(c.NATSURL()), framework.WithName(name),
		framework.WithPrincipal(DevPrincipal), framework.WithSecret(c.FrameworkSecret()), framework.WithLogger(testlog.New(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = d.Run(ctx) }()
	select {
	case st := <-sched.ended:
		if st.State != protocol.TaskFinished {
			t.Fatalf("the task ended %s", st.State)
		}
		return st
	case <-time.After(wait):
		t.Fatal("the task did not end in time")
	}
	return protocol.TaskStatus{}
}

func (s *oneTask) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx := context.Background()
	task := framework.NewTask("t1", cmp.Or(s.command, "true")).Shell().CPUs(100).Mem(32).Build()
	for _, o := range offers {
		s.mu.Lock()
		launch := !s.launched && placement.HowMany(o.Resources, placement.ShapeOf(task, 1)) > 0
		s.launched = s.launched || launch
		s.mu.Unlock()
		if launch {
			if err := d.Launch(ctx, []protocol.OfferID{o.ID}, task); err == nil {
				continue
			}
			s.mu.Lock()
			s.launched = false
			s.mu.Unlock()
		}
		_ = d.Decline(ctx, []protocol.OfferID{o.ID}, time.Minute)
	}
}

func (s *oneTask) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	if st.State.Terminal() {
		select {
		case s.ended <- st:
		default:
		}
	}
}

// stateJSON is the part of GET /v1/state these tests read.
type stateJSON struct {
	Agents []struct {
		ID         protocol.AgentID `json:"id"`
		Hostname   string           `json:"hostname"`
		State      string           `json:"state"`
		Attributes map[string]any   `json:"attributes"`
	} `json:"agents"`
	Frameworks []struct {
		ID             protocol.FrameworkID `json:"id"`
		Name           string               `json:"name"`
		CompletedTasks []struct {
			TaskID protocol.TaskID    `json:"task_id"`
			State  protocol.TaskState `json:"state"`
			Acked  bool               `json:"acked"`
		} `json:"completed_tasks"`
	} `json:"frameworks"`
}

func getState(c *Cluster) (stateJSON, error) {
	var st stateJSON
	addr := c.LeaderHTTPAddr()
	if addr == "" {
		return st, errors.New("no leader")
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/state", nil)
	if err != nil {
		return st, err
	}
	// As the dev principal: it sees its own frameworks and every agent.
	req.SetBasicAuth(DevPrincipal, c.FrameworkSecret())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /v1/state: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// waitCompleted waits until the leader's /v1/state shows framework fw
// with task t1 FINISHED among its completed tasks, and returns the state.
func waitCompleted(t *testing.T, c *Cluster, fw protocol.FrameworkID) stateJSON {
	t.Helper()
	var st stateJSON
	testutil.WaitFor(t, wait, 50*time.Millisecond, func() error {
		var err error
		if st, err = getState(c); err != nil {
			return err
		}
		for _, f := range st.Frameworks {
			if f.ID != fw {
				continue
			}
			if len(f.CompletedTasks) == 1 && f.CompletedTasks[0].TaskID == "t1" &&
				f.CompletedTasks[0].State == protocol.TaskFinished && f.CompletedTasks[0].Acked {
				return nil
			}
			return fmt.Errorf("framework %s: completed tasks %+v", fw, f.CompletedTasks)
		}
		return fmt.Errorf("framework %s not in the state", fw)
	})
	return st
}

func TestCluster_restartKeepsFrameworksAndCompletedTasks(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir, 3)
	ctx := context.Background()
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Resumed() {
		t.Error("a new data dir reports resumed")
	}
	if _, err := Start(ctx, cfg); !errors.Is(err, ErrLocked) {
		t.Errorf("second cluster on the same dir: got %v, want ErrLocked", err)
	}
	agentIDs := c.AgentIDs()
	if len(agentIDs) != 2 || agentIDs[0] == "" || agentIDs[1] == "" {
		t.Fatalf("got agent IDs %v, want two", agentIDs)
	}

	sched := &oneTask{ended: make(chan protocol.TaskStatus, 1)}
	// The cluster runs with isolation on: nobody gets in without a
	// credential, to NATS or to the state.
	if nc, err := nats.Connect(c.NATSURL()); err == nil {
		nc.Close()
		t.Fatal("a NATS client without a credential connected")
	}
	if resp, err := http.Get("http://" + c.LeaderHTTPAddr() + "/v1/state"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /v1/state without a credential: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	d, err := framework.NewDriver(sched, framework.WithNATSURLs(c.NATSURL()), framework.WithName("dev-test"),
		framework.WithPrincipal(DevPrincipal), framework.WithSecret(c.FrameworkSecret()),
		framework.WithFailoverTimeout(time.Hour), framework.WithLogger(testlog.New(t)))
	if err != nil {
		t.Fatal(err)
	}
	dctx, stopDriver := context.WithCancel(ctx)
	driverDone := make(chan error, 1)
	go func() { driverDone <- d.Run(dctx) }()
	select {
	case st := <-sched.ended:
		if st.State != protocol.TaskFinished {
			t.Fatalf("task ended %s (%s: %s), want FINISHED", st.State, st.Reason, st.Message)
		}
	case err := <-driverDone:
		t.Fatalf("driver stopped: %v", err)
	case <-time.After(wait):
		t.Fatal("the task did not end")
	}
	fw := d.ID()
	if id, ok := protocol.CheckFrameworkFilesToken(c.Layout().FilesSecret, d.FilesToken(), time.Now()); !ok || id != fw {
		t.Errorf("framework files token %q: not valid for %s under the cluster's files secret", d.FilesToken(), fw)
	}
	waitCompleted(t, c, fw)
	stopDriver()
	if err := <-driverDone; err != nil {
		t.Errorf("driver: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// The saved layout wins over a different configuration.
	cfg.Agents = 1
	c2, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if !c2.Resumed() || !slices.Equal(c2.AgentIDs(), agentIDs) {
		t.Errorf("got resumed %v, agents %v, want true, %v", c2.Resumed(), c2.AgentIDs(), agentIDs)
	}
	st := waitCompleted(t, c2, fw)
	if len(st.Agents) != 2 {
		t.Fatalf("got %d agents, want 2", len(st.Agents))
	}
	for _, a := range st.Agents {
		if a.State != "active" {
			t.Errorf("agent %s (%s) is %s, want active", a.ID, a.Hostname, a.State)
		}
	}
	if err := c2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
