package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// agentProcess is `allot agent` running as a process of its own.
type agentProcess struct {
	t       *testing.T
	args    []string
	workDir string
	http    string
	cmd     *exec.Cmd
	done    chan struct{}
}

// startAgentProcess runs `allot agent` against the cluster's NATS server.
func startAgentProcess(t *testing.T, c *testcluster.Cluster, hostname string) *agentProcess {
	t.Helper()
	p := &agentProcess{t: t, workDir: t.TempDir(), http: fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t))}
	p.args = []string{"agent", "--nats", c.NATSURL(), "--subject-prefix", c.Subjects().Prefix,
		"--work-dir", p.workDir, "--hostname", hostname, "--http", p.http, "--isolation", "portable",
		"--resources", "cpus=2000,mem=1024", "--resend-interval", "100ms", "--log-level", "debug"}
	p.start()
	t.Cleanup(p.cleanup)
	return p
}

func (p *agentProcess) start() {
	p.t.Helper()
	p.cmd = exec.Command(allotBinary(p.t), p.args...)
	p.cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	log, err := os.OpenFile(filepath.Join(p.workDir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer log.Close()
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(p.cmd, p.done)
}

// waitRegistered waits until the agent says it is registered and returns
// its ID.
func (p *agentProcess) waitRegistered() protocol.AgentID {
	p.t.Helper()
	var id protocol.AgentID
	testutil.WaitFor(p.t, sdkWait, 10*time.Millisecond, func() error {
		st, err := p.state()
		if err != nil || !st.Registered {
			return fmt.Errorf("agent not registered yet (%v)", err)
		}
		id = st.AgentID
		return nil
	})
	return id
}

// kill ends the agent process with SIGKILL, as a crash would.
func (p *agentProcess) kill() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// state reads the agent's /v1/state.
func (p *agentProcess) state() (executor.StateResponse, error) {
	var st executor.StateResponse
	resp, err := http.Get("http://" + p.http + "/v1/state")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /v1/state: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// cleanup stops the agent and kills the tasks it left running.
func (p *agentProcess) cleanup() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(testcluster.DefaultWait):
		p.kill()
	}
	pids, _ := filepath.Glob(filepath.Join(p.workDir, "sandboxes", "*", "pid"))
	for _, f := range pids {
		var pid int
		if data, err := os.ReadFile(f); err == nil {
			if _, err := fmt.Sscan(string(data), &pid); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if p.t.Failed() {
		if data, err := os.ReadFile(filepath.Join(p.workDir, "agent.log")); err == nil {
			p.t.Logf("agent log:\n%s", data)
		}
	}
}

// TestAgent_ProcessKilledAndRestarted runs `allot agent` as a process,
// kills it with SIGKILL while a task runs, and starts it again on the same
// work directory: the task keeps running, the agent comes back under the
// same ID, and the task's final status reaches the framework exactly once
// and is acknowledged.
func TestAgent_ProcessKilledAndRestarted(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, AgentTimeout: 30 * time.Second})
	p := startAgentProcess(t, c, "proc-agent")
	id := p.waitRegistered()
	f := startSDK(t, c, framework.WithName("proc"))
	f.launch(t, id, shTask("t1", waitForGo))
	f.rec.WaitState(t, "t1", protocol.TaskRunning)
	var sandbox string
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		st, err := p.state()
		if err != nil {
			return err
		}
		for _, ts := range st.Tasks {
			if ts.TaskID == "t1" && ts.Sandbox != "" {
				sandbox = filepath.Join(p.workDir, "sandboxes", ts.Sandbox)
				return nil
			}
		}
		return fmt.Errorf("agent lists no sandbox for t1: %+v", st.Tasks)
	})
	// The shell creates the file before it writes the pid in it.
	var pid int
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		data, err := os.ReadFile(filepath.Join(sandbox, "pid"))
		if err != nil {
			return err
		}
		_, err = fmt.Sscan(string(data), &pid)
		return err
	})

	p.kill()
	if !alive(pid) {
		t.Fatalf("task process %d died with the agent", pid)
	}
	if task, ok := c.WaitForLeader().View().Task(f.d.ID(), "t1"); !ok || task.State != protocol.TaskRunning {
		t.Fatalf("leader holds %+v after the agent died, want t1 RUNNING", task)
	}
	p.start()
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		st, err := p.state()
		if err != nil || !st.Registered {
			return fmt.Errorf("agent not back yet (%v)", err)
		}
		if st.AgentID != id {
			return fmt.Errorf("agent came back as %s, want %s", st.AgentID, id)
		}
		return nil
	})
	if n := len(c.WaitForLeader().View().Agents()); n != 1 {
		t.Fatalf("leader knows %d agents, want the one, reregistered", n)
	}
	if err := os.WriteFile(filepath.Join(sandbox, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.rec.WaitUpdate(t, "t1", protocol.TaskFinished)
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		if _, ok := c.WaitForLeader().View().Task(f.d.ID(), "t1"); ok {
			return fmt.Errorf("leader still holds t1: its FINISHED is not acknowledged")
		}
		return nil
	})
	if distinct, deliveries := sdktest.CountUpdates(f.rec.Statuses("t1"), protocol.TaskFinished); distinct != 1 || deliveries != 1 {
		t.Errorf("FINISHED: %d updates delivered %d times, want one, once (%s)", distinct, deliveries,
			sdktest.DescribeStatuses(f.rec.Statuses("t1")))
	}
	for _, st := range f.rec.Statuses("t1") {
		if st.State == protocol.TaskLost || st.State == protocol.TaskFailed {
			t.Errorf("t1 reported %s (%s)", st.State, st.Reason)
		}
	}
}
