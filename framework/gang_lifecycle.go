package framework

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// The life of a gang: launching a placement, deadlines, releases and
// retries.

// launch sends one launch group per agent, concurrently. When any fails,
// it kills the tasks of the others (and of unanswered ones, which may
// have committed) and returns ErrGangLaunch.
func (g *Gang) launch(ctx context.Context, p placement.Plan) error {
	errs := make([]error, len(p.Agents))
	var wg sync.WaitGroup
	for i, ap := range p.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.d.LaunchGroup(ctx, ap.OfferIDs, g.spec.GroupID, ap.Tasks...)
		}()
	}
	wg.Wait()
	failure := errors.Join(errs...)
	if failure == nil {
		return nil
	}
	if !slices.ContainsFunc(errs, func(err error) bool { return err == nil || !launchedNothing(err) }) {
		// Every accept was refused for a stale offer (an agent that
		// reregistered, an offer that timed out) or found no leader
		// to take it: nothing ran, and the gang may go on acquiring
		// with the same task IDs.
		return fmt.Errorf("%w: %w", errStaleOffers, failure)
	}
	for i, ap := range p.Agents {
		if errs[i] == nil || errors.Is(errs[i], ErrAmbiguous) {
			g.kill(ctx, ap.Tasks)
		}
	}
	return fmt.Errorf("%w: %s: %w", ErrGangLaunch, g.spec.GroupID, failure)
}

// prepare has the spec's Prepare complete the placed tasks of p, on
// copies, and puts them back into p's per-agent launches.
func (g *Gang) prepare(p *placement.Plan) error {
	if g.spec.Prepare == nil {
		return nil
	}
	tasks := make([]protocol.TaskInfo, len(p.Tasks))
	for i, t := range p.Tasks {
		t.Resources = t.Resources.Clone()
		t.Command.Args = slices.Clone(t.Command.Args)
		t.Command.Env = maps.Clone(t.Command.Env)
		t.Command.URIs = slices.Clone(t.Command.URIs)
		t.Labels = maps.Clone(t.Labels)
		t.Constraints = slices.Clone(t.Constraints)
		tasks[i] = t
	}
	if err := g.spec.Prepare(tasks); err != nil {
		return err
	}
	byID := make(map[protocol.TaskID]protocol.TaskInfo, len(tasks))
	for i, t := range tasks {
		was := p.Tasks[i]
		if t.TaskID != was.TaskID || t.AgentID != was.AgentID || t.GroupID != was.GroupID ||
			!t.Resources.Equal(was.Resources) {
			return fmt.Errorf("%w: Prepare changed the ID, agent, group or resources of task %s",
				ErrInvalidSpec, was.TaskID)
		}
		byID[t.TaskID] = t
	}
	p.Tasks = tasks
	for i := range p.Agents {
		launch := make([]protocol.TaskInfo, len(p.Agents[i].Tasks))
		for j, t := range p.Agents[i].Tasks {
			launch[j] = byID[t.TaskID]
		}
		p.Agents[i].Tasks = launch
	}
	return nil
}

// errStaleOffers marks a gang launch refused only for stale offers.
var errStaleOffers = errors.New("every offer of the placement was stale")

// kill kills tasks of the gang (launched, or maybe launched).
func (g *Gang) kill(ctx context.Context, tasks []protocol.TaskInfo) {
	for _, t := range tasks {
		if err := g.d.Kill(ctx, t.TaskID, t.AgentID, 0); err != nil && !errors.Is(err, protocol.ErrUnknownTask) {
			g.logger.Warn("could not kill a task of the gang", "task_id", t.TaskID, "error", err)
		}
	}
}

// finish ends the gang with err (nil: launched) and withdraws its demand.
func (g *Gang) finish(ctx context.Context, tasks []protocol.TaskInfo, err error) {
	if !g.settle(tasks, err) || ctx.Err() != nil {
		return
	}
	if derr := g.d.setGangDemand(ctx, g, nil); derr != nil && ctx.Err() == nil {
		g.logger.Warn("could not withdraw the gang's demand", "error", derr)
	}
}

// settle records the gang's outcome, closes Done and stops the driver
// telling the gang of events. It reports false when the gang was done
// already.
func (g *Gang) settle(tasks []protocol.TaskInfo, err error) bool {
	g.mu.Lock()
	if g.state == gangDone {
		g.mu.Unlock()
		return false
	}
	g.state = gangDone
	g.tasks, g.err = tasks, err
	close(g.done)
	g.mu.Unlock()
	g.d.mu.Lock()
	delete(g.d.gangs, g)
	g.d.mu.Unlock()
	if err != nil {
		g.logger.Warn("gang failed", "error", err)
	} else {
		g.logger.Info("gang done", "tasks", len(tasks))
	}
	return true
}

// rescind drops a held offer.
func (g *Gang) rescind(id protocol.OfferID) {
	g.mu.Lock()
	delete(g.held, id)
	g.mu.Unlock()
}

// run enforces the deadlines and retries; it runs on the driver's
// background goroutines and ends with the gang, or with Run.
func (g *Gang) run(ctx context.Context) {
	for {
		g.mu.Lock()
		state, deadline, attempt := g.state, g.deadline, g.attempt
		g.mu.Unlock()
		switch state {
		case gangDone:
			return
		case gangLaunching, gangRunning:
			select {
			case <-g.done:
			case <-g.resumed:
			case <-ctx.Done():
				g.stopWatching()
				return
			}
			continue
		}
		if !g.waitUntil(ctx, deadline) {
			continue
		}
		if !g.expire(ctx, attempt) {
			continue
		}
		wait := g.spec.Refuse + g.spec.Backoff.Delay(attempt-1)
		if g.waitUntil(ctx, time.Now().Add(wait)) {
			g.retry(ctx)
		}
	}
}

// waitUntil waits for t; false when ctx ended first (the gang then fails)
// or the gang finished.
func (g *Gang) waitUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		g.finish(ctx, nil, fmt.Errorf("%w: %s: %w", ErrGangCanceled, g.spec.GroupID, ErrNotRunning))
		return false
	case <-g.done:
		return false
	case <-timer.C:
		return true
	}
}

// expire ends attempt if it is still acquiring: everything held is
// declined and the demand withdrawn. It reports whether another attempt
// follows.
func (g *Gang) expire(ctx context.Context, attempt int) bool {
	g.mu.Lock()
	if g.state != gangAcquiring || g.attempt != attempt {
		g.mu.Unlock()
		return false
	}
	held := g.heldLocked()
	clear(g.held)
	last := g.spec.Attempts > 0 && attempt >= g.spec.Attempts
	g.state = gangWaiting // offers given to it now go back at once
	g.mu.Unlock()
	g.logger.Info("gang found no placement in time, releasing its offers", "attempt", attempt,
		"held", len(held))
	g.release(ctx, held)
	if last {
		g.finish(ctx, nil, fmt.Errorf("%w: %s after %d attempt(s)", ErrGangTimeout, g.spec.GroupID, attempt))
		return false
	}
	if err := g.d.setGangDemand(ctx, g, nil); err != nil && ctx.Err() == nil {
		g.logger.Warn("could not withdraw the gang's demand", "error", err)
	}
	return true
}

// release declines offers with the gang's refuse filter.
func (g *Gang) release(ctx context.Context, held []protocol.Offer) {
	if len(held) == 0 {
		return
	}
	if err := g.d.Decline(ctx, placement.OfferIDs(held), g.spec.Refuse); err != nil && ctx.Err() == nil {
		g.logger.Warn("could not decline the gang's offers", "error", err)
	}
}

// retry starts the next attempt after a back-off.
func (g *Gang) retry(ctx context.Context) {
	g.mu.Lock()
	if g.state != gangWaiting {
		g.mu.Unlock()
		return
	}
	g.state = gangAcquiring
	g.attempt++
	g.deadline = time.Now().Add(g.hold())
	attempt := g.attempt
	g.mu.Unlock()
	g.logger.Debug("gang acquiring", "attempt", attempt)
	if g.spec.NoDemand {
		return
	}
	if err := g.d.setGangDemand(ctx, g, g.shapes); err != nil && ctx.Err() == nil {
		g.logger.Warn("could not declare the gang's demand", "error", err)
	}
}

// Cancel stops the gang: it declines what it holds and withdraws its
// demand. A gang that launched already keeps its tasks; one that watches
// them (GangSpec.Relaunch) stops watching, and fails with ErrGangCanceled.
func (g *Gang) Cancel(ctx context.Context) {
	g.mu.Lock()
	if g.state == gangDone || g.state == gangLaunching {
		g.mu.Unlock()
		return
	}
	if g.state == gangRunning {
		tasks := g.tasks
		g.mu.Unlock()
		g.settle(tasks, fmt.Errorf("%w: %s", ErrGangCanceled, g.spec.GroupID))
		return
	}
	held := g.heldLocked()
	clear(g.held)
	g.mu.Unlock()
	g.release(ctx, held)
	g.finish(ctx, nil, fmt.Errorf("%w: %s", ErrGangCanceled, g.spec.GroupID))
}
