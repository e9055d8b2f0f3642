package loadgen

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
)

// run is one load run under way.
type run struct {
	cfg    Config
	log    hclog.Logger
	ms     []*master
	urls   []string
	fleet  *fleetProcess
	rec    *recorder
	scheds []*busy
	conns  []*nats.Conn
	terms  *termWatch
	report Report
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// Run starts the masters, the agents and the frameworks, waits for the
// frameworks to reach their tasks, measures the window (killing the
// leader as asked), drains the tasks, stops everything and reports.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	dir := cfg.Dir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return Report{}, err
		}
	} else {
		tmp, err := os.MkdirTemp("", "allot-load-")
		if err != nil {
			return Report{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	// Ended before the teardown waits for the frameworks' calls in flight.
	ctx, cancel := context.WithCancel(ctx)
	r := &run{cfg: cfg, log: cfg.Logger, rec: newRecorder(), cancel: cancel}
	r.report.Config = cfg
	defer r.teardown()
	if err := r.setup(ctx, dir); err != nil {
		return r.report, err
	}
	r.warmup(ctx)
	if err := r.window(ctx); err != nil {
		return r.report, err
	}
	if cfg.CatchUp {
		if err := r.catchUp(ctx); err != nil {
			return r.report, err
		}
	}
	r.drain(ctx)
	return r.report, nil
}

func (r *run) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

// setup starts the masters, the agents and the frameworks.
func (r *run) setup(ctx context.Context, dir string) error {
	ms, err := trio(r.cfg.Bin, dir, r.cfg.Masters, r.cfg.MasterArgs)
	if err != nil {
		return err
	}
	r.ms = ms
	for _, m := range ms {
		r.urls = append(r.urls, m.nats)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := waitLeader(wctx, ms); err != nil {
		return err
	}
	if r.terms, err = watchTerms(r.urls); err != nil {
		return err
	}
	r.progress("masters up; connecting %d agents", r.cfg.Agents)
	start := time.Now()
	fc := FleetConfig{URLs: r.urls, Agents: r.cfg.Agents, Connect: r.cfg.Connect, AgentCPUs: r.cfg.AgentCPUs, AgentMemMiB: r.cfg.AgentMemMiB}
	if r.fleet, err = startFleetProcess(ctx, r.cfg.Bin, fc, r.cfg.AgentLogLevel, os.Stderr); err != nil {
		return err
	}
	r.report.AgentsRegistered = time.Since(start)
	r.progress("%d agents registered in %s; starting %d frameworks", r.cfg.Agents, r.report.AgentsRegistered.Round(time.Millisecond), r.cfg.Frameworks)
	if err := r.startFrameworks(ctx); err != nil {
		return err
	}
	nc, err := nats.Connect(strings.Join(r.urls, ","), clientOptions()...)
	if err != nil {
		return fmt.Errorf("launch watcher: connect: %w", err)
	}
	r.conns = append(r.conns, nc)
	return r.watchLaunches(nc)
}

func (r *run) startFrameworks(ctx context.Context) error {
	per := r.cfg.Tasks / r.cfg.Frameworks
	for i := range r.cfg.Frameworks {
		nc, err := nats.Connect(strings.Join(r.urls, ","), clientOptions()...)
		if err != nil {
			return fmt.Errorf("framework %d: connect: %w", i, err)
		}
		r.conns = append(r.conns, nc)
		name := fmt.Sprintf("load%d", i)
		b := newBusy(ctx, name, r.rec, per, r.cfg.TaskDuration, uint64(i))
		// A framework that keeps tasks running sets a failover timeout, so
		// that a connection lost for a moment does not remove it.
		d, err := framework.NewDriver(b, framework.WithNATSConn(nc), framework.WithName(name),
			framework.WithFailoverTimeout(10*time.Minute), framework.WithLogger(r.log.Named(name)))
		if err != nil {
			return err
		}
		r.scheds = append(r.scheds, b)
		r.wg.Go(func() {
			if err := d.Run(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("framework stopped", "framework", name, "error", err)
			}
		})
		r.wg.Go(func() {
			select {
			case <-d.Ready():
				b.declare(ctx, d, 250*time.Millisecond)
			case <-ctx.Done():
			}
		})
	}
	return nil
}

// warmup waits until agents have reported nine in ten of the frameworks'
// tasks (launched, not only planned: the first burst of launches is not
// the steady state), or Warmup passes.
func (r *run) warmup(ctx context.Context) {
	deadline := time.Now().Add(r.cfg.Warmup)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if r.started() >= r.cfg.Tasks*9/10 {
			break
		}
		time.Sleep(time.Second)
	}
	r.progress("%d tasks running; measuring for %s", r.started(), r.cfg.Duration)
}

func (r *run) started() int {
	n := 0
	for _, b := range r.scheds {
		n += b.started()
	}
	return n
}

func (r *run) running() int {
	n := 0
	for _, b := range r.scheds {
		n += b.running()
	}
	return n
}

// drain stops the launches and waits for every task to end.
func (r *run) drain(ctx context.Context) {
	for _, b := range r.scheds {
		b.stop()
	}
	wait := r.cfg.Drain
	if wait == 0 {
		wait = 2*r.cfg.TaskDuration + time.Minute
	}
	deadline := time.Now().Add(wait)
	for r.running() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Second)
	}
	r.report.NotEnded = r.running()
	if r.report.NotEnded > 0 {
		var started, staging []string
		for _, b := range r.scheds {
			s, st := b.unended()
			started, staging = append(started, s...), append(staging, st...)
		}
		r.report.NotEndedStarted = len(started)
		slices.Sort(started)
		slices.Sort(staging)
		r.progress("not ended: %d reported by their agent (e.g. %s), %d never (e.g. %s)", len(started),
			strings.Join(started[:min(5, len(started))], ", "), len(staging), strings.Join(staging[:min(5, len(staging))], ", "))
	}
	r.rec.mu.Lock()
	r.report.Launched, r.report.LaunchErrors = r.rec.launched, r.rec.launchErrors
	r.report.Redelivered, r.report.Conflicting = r.rec.redelivered, r.rec.conflicting
	r.report.Ended = map[string]int{}
	for st, n := range r.rec.ended {
		r.report.Ended[st] = n
	}
	r.rec.mu.Unlock()
	if i := leader(ctx, r.ms); i >= 0 {
		if s, err := readMetrics(ctx, r.ms[i]); err == nil {
			r.report.AgentsActive = int(s.value(`allot_agents{state="active"}`))
		}
	}
	r.report.Reregistrations = r.fleet.registrations() - r.cfg.Agents
	r.report.Elections = r.terms.count() - 1
	r.progress("drained: %d tasks not ended", r.report.NotEnded)
}

func (r *run) teardown() {
	r.cancel()
	for _, b := range r.scheds {
		b.stop()
		b.inflight.Wait()
	}
	for _, nc := range r.conns {
		nc.Close()
	}
	r.wg.Wait()
	if r.fleet != nil {
		r.fleet.close()
	}
	if r.terms != nil {
		r.terms.close()
	}
	stopAll(r.ms)
}
