package executor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/nats-io/nats.go"
)

// Run runs the agent until ctx is done: it loads the checkpoint, starts
// the file server, connects to NATS, reattaches the tasks that survived a
// previous run, registers (or, with a checkpointed ID, reregisters), and
// then follows the master's commands. A cancelled ctx is a graceful stop:
// tasks keep running (their shims are detached) and the checkpoint holds
// everything a later Run on the same work directory needs; Run then
// returns nil once every goroutine it started has exited. Run may be
// called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.ran.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lock, err := lockWorkDir(ctx, filepath.Join(a.cfg.WorkDir, lockFile), lockWait)
	if err != nil {
		return err
	}
	defer lock.Close()
	err = a.start(runCtx)
	if err == nil {
		a.log.Info("agent running", "agent_id", a.ID(), "hostname", a.cfg.Hostname, "http_addr", a.HTTPAddr(),
			"resources", a.total.String(), "isolation", a.runner.Isolation())
		close(a.ready)
		a.wg.Add(4)
		go a.sessionLoop(runCtx)
		go a.sendLoop(runCtx)
		go a.shuffleReportLoop(runCtx)
		go a.gcLoop(runCtx)
		if p := a.shuffle.pacer; p != nil {
			a.wg.Go(func() { p.run(runCtx) })
		}
		if in := a.shuffle.ingress; in != nil {
			a.wg.Go(func() { in.pacer.run(runCtx) })
		}
		<-runCtx.Done()
	}
	stopped := ctx.Err() != nil
	cancel()
	a.shutdown()
	if err != nil && stopped && errors.Is(err, context.Canceled) {
		err = nil // stopped while registering
	}
	if err == nil {
		a.log.Info("agent stopped", "agent_id", a.ID())
	}
	return err
}

// start brings the agent up to its first successful registration.
func (a *Agent) start(ctx context.Context) error {
	rec, found, err := a.ckpt.loadAgent()
	if err != nil {
		return err
	}
	if found {
		a.mu.Lock()
		a.id.store(rec.AgentID)
		a.mu.Unlock()
	}
	a.gc.load()
	j, recs, err := a.ckpt.openTasks()
	if err != nil {
		return err
	}
	a.startFlusher(j)
	if err := a.startHTTP(); err != nil {
		return err
	}
	if err := a.connect(ctx); err != nil {
		return err
	}
	if err := a.subscribe(a.subj.Leader(), func(m *nats.Msg) { a.onLeader(m) }); err != nil {
		return err
	}
	a.recoverTasks(ctx, recs)
	if !found && a.hasTasks() {
		// Records without an agent ID: the agent was abandoned midway.
		a.log.Warn("task records without an agent id; killing those tasks")
		if err := a.abandon(ctx); err != nil {
			return err
		}
	}
	return a.join(ctx)
}

func (a *Agent) hasTasks() bool {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	return len(a.tasks.live) > 0
}

// subscribe subscribes h to subject; the handler runs only while the
// agent is not stopping, and is waited for on shutdown.
func (a *Agent) subscribe(subject string, h func(*nats.Msg)) error {
	sub, err := a.nc.Subscribe(subject, a.guard(h))
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	a.mu.Lock()
	a.subs = append(a.subs, sub)
	a.mu.Unlock()
	return nil
}

// guard wraps a message handler so it never runs after shutdown began,
// is waited for, and cannot crash the agent.
func (a *Agent) guard(h func(*nats.Msg)) nats.MsgHandler {
	return func(m *nats.Msg) {
		a.mu.Lock()
		if a.stopping {
			a.mu.Unlock()
			return
		}
		a.wg.Add(1)
		a.mu.Unlock()
		defer a.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				a.log.Error("message handler panicked", "subject", m.Subject, "panic", fmt.Sprint(r))
			}
		}()
		h(m)
	}
}

// shutdown stops handlers, waits for every goroutine, writes the task
// records still queued, and closes what Run opened. Tasks keep running.
func (a *Agent) shutdown() {
	a.mu.Lock()
	a.stopping = true
	subs := a.subs
	for _, sub := range []*nats.Subscription{a.cmdSub, a.ingressSub} {
		if sub != nil {
			subs = append(subs, sub)
		}
	}
	a.subs, a.cmdSub, a.ingressSub = nil, nil, nil
	nc := a.nc
	a.mu.Unlock()
	// Waiting transfers are answered now rather than cut when the file
	// server stops.
	a.shuffle.gate.stop()
	for _, s := range subs {
		if err := s.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			a.log.Debug("unsubscribe", "subject", s.Subject, "error", err)
		}
	}
	a.wg.Wait()
	// The tasks run on; the next agent on this work dir watches them.
	a.runner.Close()
	a.stopFlusher()
	a.stopHTTP()
	if nc != nil && a.cfg.NATSConn == nil {
		nc.Close()
	}
}
