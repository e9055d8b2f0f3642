package testcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
)

// Procs is a cluster of real processes, for what only processes show: a
// master paused with SIGSTOP, a SIGKILL in the middle of a write, the
// timeouts `allot master` ships. StartProcs runs `allot master` n times on
// loopback (TCP Raft with data directories, embedded NATS servers joined
// by routes, the shipped defaults but for the flags given) and `allot
// agent`s; t.Cleanup stops them all and prints the logs of a failed test.
type Procs struct {
	t       testing.TB
	bin     string
	dir     string
	Masters []*Proc
	Agents  []*Proc
}

// ProcOptions shapes StartProcs' cluster.
type ProcOptions struct {
	Masters, Agents int
	// MasterArgs and AgentArgs are added to every master's and agent's
	// command line.
	MasterArgs, AgentArgs []string
}

// Proc is one process of a Procs cluster. HTTP is its HTTP address;
// NATS a master's client URL.
type Proc struct {
	Name string
	HTTP string
	NATS string
	t    testing.TB
	bin  string
	args []string
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
}

// StartProcs starts the masters and waits for a leader, then starts the
// agents, each given every master's NATS URL, and waits until the leader
// knows them all.
func StartProcs(t testing.TB, bin string, o ProcOptions) *Procs {
	t.Helper()
	c := &Procs{t: t, bin: bin, dir: t.TempDir()}
	ports := testutil.FreePorts(t, 4*o.Masters+o.Agents)
	var peers, routes []string
	for i := range o.Masters {
		peers = append(peers, fmt.Sprintf("m%d=127.0.0.1:%d", i, ports[4*i]))
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[4*i+3]))
	}
	for i := range o.Masters {
		p := &Proc{Name: fmt.Sprintf("m%d", i), t: t, bin: bin,
			HTTP: fmt.Sprintf("127.0.0.1:%d", ports[4*i+1]), NATS: fmt.Sprintf("nats://127.0.0.1:%d", ports[4*i+2])}
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, r)
			}
		}
		p.args = append([]string{"master", "--node-id", p.Name, "--data-dir", filepath.Join(c.dir, p.Name),
			"--raft-bind", fmt.Sprintf("127.0.0.1:%d", ports[4*i]), "--http", p.HTTP,
			"--peers", strings.Join(peers, ","), "--bootstrap",
			"--nats-listen", strings.TrimPrefix(p.NATS, "nats://"), "--nats-cluster", fmt.Sprintf("127.0.0.1:%d", ports[4*i+3]),
			"--nats-routes", strings.Join(others, ","), "--log-level", "debug"}, o.MasterArgs...)
		p.log = filepath.Join(c.dir, p.Name+".log")
		c.Masters = append(c.Masters, p)
	}
	t.Cleanup(c.cleanup)
	for _, p := range c.Masters {
		p.Start()
	}
	c.WaitForLeader()
	for i := range o.Agents {
		c.StartAgent(ports[4*o.Masters+i], c.NATSURLs(), o.AgentArgs...)
	}
	return c
}

// StartAgent starts one more agent on httpPort, connected to urls.
func (c *Procs) StartAgent(httpPort int, urls []string, args ...string) *Proc {
	c.t.Helper()
	name := fmt.Sprintf("agent%d", len(c.Agents))
	p := &Proc{Name: name, t: c.t, bin: c.bin, HTTP: fmt.Sprintf("127.0.0.1:%d", httpPort), log: filepath.Join(c.dir, name+".log")}
	p.args = append([]string{"agent", "--nats", strings.Join(urls, ","), "--work-dir", filepath.Join(c.dir, name),
		"--hostname", name, "--http", p.HTTP, "--isolation", "portable", "--resources", "cpus=2000,mem=1024",
		"--log-level", "debug"}, args...)
	c.Agents = append(c.Agents, p)
	p.Start()
	return p
}

// NATSURLs are the masters' NATS client URLs.
func (c *Procs) NATSURLs() []string {
	var out []string
	for _, p := range c.Masters {
		out = append(out, p.NATS)
	}
	return out
}

// LeaderIndex is the master that serves as leader by its own account, or
// -1. Paused and stopped masters are not asked.
func (c *Procs) LeaderIndex() int {
	for i, p := range c.Masters {
		if !p.Running() || p.Paused() {
			continue
		}
		var l api.Leader
		if err := GetJSON("http://"+p.HTTP+"/v1/leader", &l); err == nil && l.IsLeader {
			return i
		}
	}
	return -1
}

// WaitForLeader waits until a master serves as leader and returns it.
func (c *Procs) WaitForLeader() int {
	c.t.Helper()
	i := -1
	testutil.WaitFor(c.t, 3*DefaultWait, 20*time.Millisecond, func() error {
		if i = c.LeaderIndex(); i < 0 {
			return errors.New("no master serves as leader")
		}
		return nil
	})
	return i
}

// State reads the leader's /v1/state into v.
func (c *Procs) State(v any) error {
	i := c.LeaderIndex()
	if i < 0 {
		return errors.New("no leader")
	}
	return GetJSON("http://"+c.Masters[i].HTTP+"/v1/state", v)
}

// GetJSON reads url's JSON body into v, giving up after a second.
func GetJSON(url string, v any) error {
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Start runs the process (again).
func (p *Proc) Start() {
	p.t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	log, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done, p.paused = cmd, done, false
	p.mu.Unlock()
}

// Running reports whether the process was started and has not exited.
func (p *Proc) Running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Paused reports whether Pause stopped the process and Resume has not
// continued it.
func (p *Proc) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *Proc) Kill() { p.signalAndWait(syscall.SIGKILL) }

// Pause stops the process with SIGSTOP: it keeps its sockets open and
// answers nothing, as a hung or swapped-out process.
func (p *Proc) Pause() {
	p.signal(syscall.SIGSTOP)
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

// Resume continues a paused process (SIGCONT).
func (p *Proc) Resume() {
	p.signal(syscall.SIGCONT)
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}

func (p *Proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

func (p *Proc) signalAndWait(sig syscall.Signal) {
	if done := p.resumeAndSignal(sig); done != nil {
		<-done
	}
}

// resumeAndSignal continues the process, in case it is paused, and sends
// it sig; it returns the channel closed when it exits (nil if it never
// started).
func (p *Proc) resumeAndSignal(sig syscall.Signal) <-chan struct{} {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(sig)
	return done
}

// stop ends the process with SIGTERM, or SIGKILL when it does not exit in
// time.
func (p *Proc) stop() {
	done := p.resumeAndSignal(syscall.SIGTERM)
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(DefaultWait):
		p.Kill()
	}
}

func (c *Procs) cleanup() {
	var wg sync.WaitGroup
	for _, p := range append(append([]*Proc(nil), c.Agents...), c.Masters...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop()
		}()
	}
	wg.Wait()
	// Tasks the agents left behind.
	pids, _ := filepath.Glob(filepath.Join(c.dir, "agent*", "sandboxes", "*", "pid"))
	for _, f := range pids {
		var pid int
		if data, err := os.ReadFile(f); err == nil {
			if _, err := fmt.Sscan(string(data), &pid); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if c.t.Failed() {
		for _, p := range append(append([]*Proc(nil), c.Masters...), c.Agents...) {
			if data, err := os.ReadFile(p.log); err == nil {
				c.t.Logf("%s log (last 8 KB):\n%s", p.Name, tail(data, 8<<10))
			}
		}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
