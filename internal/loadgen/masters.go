package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/allot-project/allot/master/api"
)

// master is one `allot master` process.
type master struct {
	name string
	data string // its data directory
	http string // host:port of its HTTP API
	nats string // its NATS client URL
	args []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// trio starts n masters on loopback: TCP Raft with data directories
// under dir, embedded NATS servers joined by routes, every other setting
// as `allot master` ships it, plus extra.
func trio(bin, dir string, n int, extra []string) ([]*master, error) {
	ports, err := freePorts(4 * n)
	if err != nil {
		return nil, err
	}
	var peers, routes []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("m%d=127.0.0.1:%d", i, ports[4*i]))
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[4*i+3]))
	}
	var ms []*master
	for i := range n {
		m := &master{name: fmt.Sprintf("m%d", i), data: filepath.Join(dir, fmt.Sprintf("m%d", i)), http: fmt.Sprintf("127.0.0.1:%d", ports[4*i+1]),
			nats: fmt.Sprintf("nats://127.0.0.1:%d", ports[4*i+2]), log: filepath.Join(dir, fmt.Sprintf("m%d.log", i))}
		var others []string
		for j, r := range routes {
			if j != i {
				others = append(others, r)
			}
		}
		m.args = append([]string{bin, "master", "--node-id", m.name, "--data-dir", m.data,
			"--raft-bind", fmt.Sprintf("127.0.0.1:%d", ports[4*i]), "--http", m.http,
			"--peers", strings.Join(peers, ","), "--bootstrap",
			"--nats-listen", strings.TrimPrefix(m.nats, "nats://"), "--nats-cluster", fmt.Sprintf("127.0.0.1:%d", ports[4*i+3]),
			"--nats-routes", strings.Join(others, ",")}, extra...)
		ms = append(ms, m)
	}
	for _, m := range ms {
		if err := m.start(); err != nil {
			stopAll(ms)
			return nil, err
		}
	}
	return ms, nil
}

// freePorts reserves n distinct loopback ports by listening on them, and
// gives them up for the masters to take.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (m *master) start() error {
	out, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(m.args[0], m.args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", m.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	m.mu.Lock()
	m.cmd, m.done = cmd, done
	m.mu.Unlock()
	return nil
}

// running reports whether the process runs.
func (m *master) running() bool {
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
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

// kill sends SIGKILL and waits for the process to end.
func (m *master) kill() {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// stop asks the process to stop (SIGTERM), and kills it if it has not
// within ten seconds.
func (m *master) stop() {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		m.kill()
	}
}

func stopAll(ms []*master) {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(m.stop)
	}
	wg.Wait()
}

// leader returns the index of the running master that leads by its own
// account, or -1.
func leader(ctx context.Context, ms []*master) int {
	for i, m := range ms {
		if !m.running() {
			continue
		}
		var l api.Leader
		if err := getJSON(ctx, "http://"+m.http+"/v1/leader", &l); err == nil && l.IsLeader {
			return i
		}
	}
	return -1
}

// waitLeader polls until a master leads, or ctx ends.
func waitLeader(ctx context.Context, ms []*master) (int, error) {
	for {
		if i := leader(ctx, ms); i >= 0 {
			return i, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("no master leads: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitReady polls a master's /readyz until it answers 200, or ctx ends.
func waitReady(ctx context.Context, m *master) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.http+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w", m.name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func getJSON(ctx context.Context, url string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
