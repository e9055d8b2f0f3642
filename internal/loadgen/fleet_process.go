package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// The simulated agents run in a process of their own ('allot bench
// agents'), at a lower scheduling priority than the masters and the
// frameworks. Real agents each have a machine and take no CPU from the
// masters; here ten thousand of them share two cores with the masters,
// the frameworks and the measurements, and in one process with the
// frameworks they delayed what was measured (an offer waited for the
// frameworks' goroutines behind the agents'). At a lower priority they
// take only the CPU the rest leaves. The two processes talk over the
// child's stdin and stdout, a line each way: "stats" answered with
// FleetStats as JSON, "close" (or end of input) ending the child.

// FleetNice is the agents' process's niceness.
const FleetNice = 10

// FleetConfig is the agents' process's part of a run.
type FleetConfig struct {
	URLs                   []string
	Agents, Connect        int
	AgentCPUs, AgentMemMiB int64
	Logger                 hclog.Logger
}

// FleetStats is what the agents' process reports when asked.
type FleetStats struct {
	Traffic       nats.Statistics
	Registrations int
	// Lag is how late the process ran a timer due every 10 ms, since the
	// last stats (lagProbe).
	Lag Quantiles
	// Outages are the agents' NATS outages since the last stats.
	Outages OutageStats
}

// fleetReady is the line the agents' process writes once every agent is
// registered.
const fleetReady = "ready"

// RunFleet is the agents' process: it connects and registers the agents,
// says so on out, and answers requests read from in until "close", the
// end of in, or ctx ends.
func RunFleet(ctx context.Context, cfg FleetConfig, in io.Reader, out io.Writer) error {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	res := protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000 * cfg.AgentCPUs, protocol.ResMem: cfg.AgentMemMiB})
	f, err := startFleet(ctx, cfg.URLs, cfg.Agents, cfg.Connect, res, cfg.Logger)
	if err != nil {
		return err
	}
	defer f.close()
	probe := &lagProbe{}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go probe.run(pctx)
	if _, err := fmt.Fprintln(out, fleetReady); err != nil {
		return err
	}
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		switch strings.TrimSpace(lines.Text()) {
		case "stats":
			b, err := json.Marshal(FleetStats{Traffic: f.traffic(), Registrations: f.registrations(), Lag: probe.take(), Outages: f.outages.take()})
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(out, "%s\n", b); err != nil {
				return err
			}
		case "close":
			return nil
		}
	}
	return lines.Err()
}

// fleetProcess is the parent's handle on the agents' process.
type fleetProcess struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	mu   sync.Mutex
	done chan struct{}
	werr error
}

// startFleetProcess starts 'allot bench agents' and waits until its agents
// are registered.
func startFleetProcess(ctx context.Context, bin string, cfg FleetConfig, level string, stderr io.Writer) (*fleetProcess, error) {
	if level == "" {
		level = "warn"
	}
	cmd := exec.Command(bin, "bench", "agents", "--nats", strings.Join(cfg.URLs, ","),
		"--agents", strconv.Itoa(cfg.Agents), "--connect", strconv.Itoa(cfg.Connect),
		"--agent-cpus", strconv.FormatInt(cfg.AgentCPUs, 10), "--agent-mem", strconv.FormatInt(cfg.AgentMemMiB, 10),
		"--log-level", level)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the agents' process: %w", err)
	}
	p := &fleetProcess{cmd: cmd, in: in, out: bufio.NewScanner(out), done: make(chan struct{})}
	p.out.Buffer(make([]byte, 64<<10), 1<<20)
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, FleetNice); err != nil {
		fmt.Fprintf(stderr, "agents' process left at the masters' priority: %v\n", err)
	}
	ready := make(chan error, 1)
	go func() {
		if !p.out.Scan() {
			ready <- fmt.Errorf("the agents' process ended before its agents registered: %w", errors.Join(p.out.Err(), io.ErrUnexpectedEOF))
			return
		}
		if line := p.out.Text(); line != fleetReady {
			ready <- fmt.Errorf("the agents' process said %q, want %q", line, fleetReady)
			return
		}
		ready <- nil
	}()
	go func() {
		p.werr = cmd.Wait()
		close(p.done)
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		return nil, err
	}
	return p, nil
}

// stats asks the agents' process for its figures (zero if it cannot say).
func (p *fleetProcess) stats() FleetStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s FleetStats
	if _, err := fmt.Fprintln(p.in, "stats"); err != nil || !p.out.Scan() {
		return s
	}
	_ = json.Unmarshal(p.out.Bytes(), &s)
	return s
}

func (p *fleetProcess) traffic() nats.Statistics { return p.stats().Traffic }

func (p *fleetProcess) registrations() int { return p.stats().Registrations }

// close asks the agents' process to stop, and kills it if it has not
// within a minute.
func (p *fleetProcess) close() {
	p.mu.Lock()
	_, _ = fmt.Fprintln(p.in, "close")
	_ = p.in.Close()
	p.mu.Unlock()
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
