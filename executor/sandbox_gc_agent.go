package executor

import (
	"context"
	"time"
)

// gcLoop runs the sandbox collector (sandbox_gc.go): once at the start,
// then every GCInterval, and when nudged after a task's end or a
// framework's shutdown, at most every gcGap.
func (a *Agent) gcLoop(ctx context.Context) {
	defer a.wg.Done()
	tick := time.NewTicker(a.cfg.GCInterval)
	defer tick.Stop()
	for {
		a.gc.pass(ctx, time.Now(), a.tasks.sandboxTasks(), a.tasks.runsSandbox)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			continue
		case <-a.gc.poke:
		}
		// A burst of task ends makes one pass, not one each: passes
		// measure the running tasks' sandboxes.
		gap := time.NewTimer(gcGap(a.cfg.GCInterval))
		select {
		case <-ctx.Done():
			gap.Stop()
			return
		case <-gap.C:
		}
	}
}

// gcGap is the least time between two passes a nudge starts.
func gcGap(interval time.Duration) time.Duration { return min(interval, time.Second) / 4 }

// sandboxTasks returns, by sandbox name, the tasks that have one: those
// the agent has (running, or ended and not yet forgotten) and those it
// remembers ended.
func (s *taskStore) sandboxTasks() map[string]sandboxTask {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]sandboxTask, len(s.live)+len(s.ended))
	for k, e := range s.ended {
		if e.sandbox {
			out[e.name] = sandboxTask{fw: k.fw, task: k.id, ended: endedAt(e.status.Timestamp, now)}
		}
	}
	for k, t := range s.live {
		if t.rec.Unknown {
			continue // no sandbox
		}
		st := sandboxTask{fw: k.fw, task: k.id, running: !t.rec.State.Terminal()}
		if !st.running && t.rec.Latest != nil {
			st.ended = endedAt(t.rec.Latest.Status.Timestamp, now)
		} else if !st.running {
			st.ended = now
		}
		out[t.rec.Name] = st
	}
	return out
}

// endedAt is a final status's time (Unix nanoseconds), or now when it has
// none.
func endedAt(ns int64, now time.Time) time.Time {
	if ns <= 0 {
		return now
	}
	return time.Unix(0, ns)
}

// runsSandbox reports whether a task the agent has that has not ended
// uses the sandbox name.
func (s *taskStore) runsSandbox(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.live {
		if t.rec.Name == name && !t.rec.State.Terminal() {
			return true
		}
	}
	return false
}
