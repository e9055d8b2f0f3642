package dag

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// shareKnownLocked reports whether jobs plan altruistically within a
// share: a share has arrived and WithGreedy was not given.
func (s *Scheduler) shareKnownLocked() bool {
	return !s.cfg.greedy && !s.share.IsEmpty()
}

// reshareLocked splits the framework's share among the active jobs.
func (s *Scheduler) reshareLocked() {
	if !s.shareKnownLocked() {
		for _, js := range s.active {
			js.share = protocol.Resources{}
		}
		return
	}
	caps := make([]protocol.Resources, len(s.active))
	for i, js := range s.active {
		caps[i] = js.unfinished()
	}
	for i, sh := range divideShare(s.share, caps) {
		s.active[i].share = sh
	}
}

// replanLocked plans the given jobs at the current time.
func (s *Scheduler) replanLocked(jobs ...*jobState) {
	// Any plan may change what is due; onTimer backs off again after its
	// own plans if the timer is still due at once.
	s.timerBackoff = 0
	now := s.cfg.clock.Now()
	for _, js := range jobs {
		if js.ended {
			continue
		}
		d, err := s.planLocked(js, now)
		if err != nil {
			// Plan fails only on an invalid share or draw, neither of which
			// the scheduler produces; keep the previous plan.
			s.logger.Error("plan", "job_id", js.spec.ID, "error", err)
			continue
		}
		ensureProgress(&d, len(js.running) > 0)
		js.plan = d
		js.res.Plans++
		s.stats.Plans++
		s.logger.Trace("planned", "job_id", js.spec.ID, "altruistic", d.Altruistic,
			"must_start", len(d.MustStart), "optional", len(d.Optional), "completion", d.Completion,
			"share", js.share)
	}
}

// planLocked plans one job: in its share when the share is known, and
// otherwise greedily in a share as large as everything it has left to
// run, so that every runnable task is must-start.
func (s *Scheduler) planLocked(js *jobState, now time.Time) (altruism.Decision, error) {
	if s.shareKnownLocked() {
		if err := js.job.ShareChanged(js.share); err != nil {
			return altruism.Decision{}, err
		}
		return js.planner.Plan(js.job, now, js.rng.Float64())
	}
	if err := js.job.ShareChanged(js.unfinished()); err != nil {
		return altruism.Decision{}, err
	}
	return s.greedy.Plan(js.job, now, 0)
}

// ensureProgress makes the most urgent optional task must-start when a
// job has nothing running and nothing to start: a job whose share is too
// small for any of its tasks would otherwise wait for leftover forever.
func ensureProgress(d *altruism.Decision, running bool) {
	if running || len(d.MustStart) > 0 {
		return
	}
	for i := range d.Tasks {
		tp := &d.Tasks[i]
		if tp.Runnable && !tp.MustStart {
			tp.MustStart = true
			d.MustStart = append(d.MustStart, tp.Task)
			d.Optional = slices.DeleteFunc(slices.Clone(d.Optional), func(id altruism.TaskID) bool { return id == tp.Task })
			return
		}
	}
}

// demandLocked sums the plans of the active jobs into one report.
func (s *Scheduler) demandLocked() protocol.DemandRequest {
	var req protocol.DemandRequest
	for _, js := range s.active {
		js.plan.AddTo(&req)
	}
	return req
}

// syncLocked declares the current demand unless the leader already has
// it, suppresses offers while there is none and revives them when some
// returns, and arms the plan timer. Without a driver (before Registered)
// it only arms the timer.
func (s *Scheduler) syncLocked(ctx context.Context) {
	defer s.armLocked()
	if s.drv == nil || s.closed {
		return
	}
	req := s.demandLocked()
	empty := len(req.Demand)+len(req.MustStart)+len(req.Optional) == 0
	if empty && !s.suppressed {
		if err := s.drv.Suppress(ctx); err != nil {
			s.logger.Warn("suppress offers", "error", err)
		} else {
			s.suppressed = true
		}
	}
	if !s.sent || !reflect.DeepEqual(req, s.last) {
		if err := s.drv.DeclareDemand(ctx, req); err != nil {
			s.logger.Warn("declare demand", "error", err)
			s.sent = false
		} else {
			s.last, s.sent = req, true
			s.stats.Declarations++
			s.logger.Trace("demand declared", "must_start", countShapes(req.MustStart),
				"optional", countShapes(req.Optional), "remaining_work", req.RemainingWork)
		}
	}
	if !empty && s.suppressed {
		if err := s.drv.Revive(ctx); err != nil {
			s.logger.Warn("revive offers", "error", err)
		} else {
			s.suppressed = false
		}
	}
}

func countShapes(shapes []protocol.TaskShape) int64 {
	var n int64
	for _, sh := range shapes {
		n += sh.Count
	}
	return n
}

// minTimer is the least delay of the plan timer, so that plans whose
// timer is always due (running tasks past their estimate, planned to end
// in the planner's MinRemaining) do not make the timer spin.
const minTimer = 10 * time.Millisecond

// maxTimerBackoff bounds the delay the plan timer backs off to while every
// plan it makes is due again at once.
const maxTimerBackoff = time.Second

// armLocked sets the plan timer to the earliest NextReplan of the active
// jobs.
func (s *Scheduler) armLocked() {
	var next time.Time
	for _, js := range s.active {
		if t := js.plan.NextReplan; !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if s.timer != nil && next.Equal(s.timerAt) {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.timerAt = next
	if next.IsZero() || s.closed {
		return
	}
	s.timer = s.cfg.clock.AfterFunc(max(next.Sub(s.cfg.clock.Now()), minTimer, s.timerBackoff), s.onTimer)
}

// onTimer plans again the jobs whose plan timer is due.
func (s *Scheduler) onTimer() {
	s.mu.Lock()
	defer s.unlock()
	if s.closed {
		return
	}
	s.timer = nil
	s.timerAt = time.Time{}
	now := s.cfg.clock.Now()
	var due []*jobState
	for _, js := range s.active {
		if t := js.plan.NextReplan; !t.IsZero() && !t.After(now) {
			due = append(due, js)
		}
	}
	backoff := s.timerBackoff
	s.replanLocked(due...)
	// Plans that are due again at once only happen while running tasks
	// outlive their estimates: nothing changes until one of them ends,
	// which is an event of its own, so the timer backs off (doubling up to
	// maxTimerBackoff) instead of replanning every minTimer.
	for _, js := range s.active {
		if t := js.plan.NextReplan; !t.IsZero() && !t.After(now.Add(minTimer)) {
			s.timerBackoff = min(max(2*backoff, 2*minTimer), maxTimerBackoff)
			break
		}
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	s.syncLocked(ctx)
}

// shareUpdate takes the framework's new fair share.
func (s *Scheduler) shareUpdate(d driver, ev protocol.ShareUpdateEvent) {
	s.mu.Lock()
	defer s.unlock()
	s.drv = d
	s.stats.ShareUpdates++
	if s.closed {
		return
	}
	share := protocol.Scalars(ev.FairShare)
	for name, v := range share.Scalars {
		if v <= 0 {
			delete(share.Scalars, name)
		}
	}
	if share.Equal(s.share) {
		return
	}
	s.logger.Debug("share changed", "share", share, "dominant_share", ev.DominantShare)
	s.share = share
	s.reshareLocked()
	s.replanLocked(s.active...)
	ctx, cancel := s.callCtx()
	defer cancel()
	s.syncLocked(ctx)
}
