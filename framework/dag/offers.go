package dag

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// candidate is a runnable task an offer may take.
type candidate struct {
	js     *jobState
	task   altruism.TaskID
	must   bool
	latest time.Time // latest start
}

// candidatesLocked lists the runnable tasks of the active jobs' plans in
// the order offers of kind serve them. Fair offers take only must-start
// tasks; leftover offers take must-start tasks first (they found no fair
// room) and then optional ones. Either way the task closest to its latest
// start goes first, then the job with the least remaining work (SRTF),
// then the job submitted first.
func (s *Scheduler) candidatesLocked(kind protocol.OfferKind) []candidate {
	var out []candidate
	for _, js := range s.active {
		for _, tp := range js.plan.Tasks {
			fair := js.plan.FairNow(tp)
			if !tp.Runnable || (kind == protocol.OfferFair && !fair) {
				continue
			}
			out = append(out, candidate{js: js, task: tp.Task, must: fair, latest: js.plan.At.Add(tp.LatestStart)})
		}
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		if a.must != b.must {
			if a.must {
				return -1
			}
			return 1
		}
		if c := a.latest.Compare(b.latest); c != 0 {
			return c
		}
		if c := cmp.Compare(a.js.plan.RemainingWork, b.js.plan.RemainingWork); c != 0 {
			return c
		}
		return cmp.Compare(a.js.seq, b.js.seq)
	})
	return out
}

// offers handles a batch of offers, agent by agent: fair offers first,
// then leftover ones.
func (s *Scheduler) offers(d driver, offers []protocol.Offer) {
	s.mu.Lock()
	defer s.unlock()
	s.drv = d
	ctx, cancel := s.callCtx()
	defer cancel()
	touched := map[*jobState]bool{}
	for _, group := range placement.ByAgent(offers) {
		var fair, leftover []protocol.Offer
		for _, o := range group {
			if o.Kind == protocol.OfferLeftover {
				leftover = append(leftover, o)
				s.stats.LeftoverOffers++
			} else {
				fair = append(fair, o)
				s.stats.FairOffers++
			}
		}
		s.placeLocked(ctx, fair, protocol.OfferFair, touched)
		s.placeLocked(ctx, leftover, protocol.OfferLeftover, touched)
	}
	if len(touched) == 0 {
		return
	}
	var jobs []*jobState
	for _, js := range s.active {
		if touched[js] {
			jobs = append(jobs, js)
		}
	}
	s.replanLocked(jobs...)
	s.syncLocked(ctx)
}

// placeLocked launches what it can of the candidates for kind on offers
// (all on one agent) and declines the offers to the leftover pool if
// nothing fits. Jobs whose tasks it launched are added to touched.
func (s *Scheduler) placeLocked(ctx context.Context, offers []protocol.Offer, kind protocol.OfferKind, touched map[*jobState]bool) {
	if len(offers) == 0 {
		return
	}
	ids := placement.OfferIDs(offers)
	avail := placement.SumOffers(offers)
	agent := offers[0].AgentID
	revocable := kind == protocol.OfferLeftover ||
		slices.ContainsFunc(offers, func(o protocol.Offer) bool { return o.Revocable })
	var picked []candidate
	if !s.closed {
		for _, c := range s.candidatesLocked(kind) {
			need := c.js.demand[c.task.Stage]
			if c.js.unstarted(c.task) && placement.Fits(avail, need) {
				picked = append(picked, c)
				avail = placement.Subtract(avail, need)
			}
		}
	}
	if len(picked) == 0 {
		if err := s.drv.DeclineLeftover(ctx, ids); err != nil {
			s.logger.Warn("decline offers", "offers", len(ids), "error", err)
			return
		}
		s.stats.DeclinedOffers += len(ids)
		if kind == protocol.OfferFair {
			s.stats.DeclinedLeftover.AddInPlace(protocol.Scalars(avail.Scalars))
		}
		return
	}
	tasks := make([]protocol.TaskInfo, len(picked))
	refs := make([]TaskRef, len(picked))
	for i, c := range picked {
		tasks[i], refs[i] = c.js.buildTask(c.task, kind, agent)
		c.js.attempts[c.task]++
	}
	err := s.drv.Launch(ctx, ids, tasks...)
	if err != nil && !errors.Is(err, framework.ErrAmbiguous) {
		s.launchRefusedLocked(picked, err)
		for _, c := range picked {
			touched[c.js] = true
		}
		return
	}
	if err != nil {
		// It may have committed: count the tasks as launched; if it did
		// not, reconciliation reports them LOST and they run again.
		s.logger.Warn("launch unanswered", "tasks", len(tasks), "error", err)
	}
	if kind == protocol.OfferFair {
		s.stats.DeclinedLeftover.AddInPlace(protocol.Scalars(avail.Scalars))
	}
	now := s.cfg.clock.Now()
	for i, c := range picked {
		if err := c.js.job.TaskStarted(c.task, now); err != nil {
			s.logger.Error("task started", "task_id", tasks[i].TaskID, "error", err)
			continue
		}
		a := &attempt{js: c.js, task: c.task, agent: agent, kind: kind, res: tasks[i].Resources,
			started: now, revocable: revocable}
		s.tasks[tasks[i].TaskID] = a
		c.js.running[tasks[i].TaskID] = a
		if kind == protocol.OfferLeftover {
			c.js.res.LeftoverTasks++
			s.stats.LeftoverTasks++
		} else {
			c.js.res.FairTasks++
			s.stats.FairTasks++
		}
		touched[c.js] = true
	}
	s.sent = false // the leader lowered its copy of the demand
	s.logger.Debug("launched", "agent_id", agent, "kind", kind, "tasks", len(tasks), "unused", avail)
}

// launchRefusedLocked handles a launch the master refused. Offers gone
// stale (rescinded, or taken by a leader change) and a lost connection
// are nobody's fault: the tasks stay pending. Any other refusal is the
// tasks' own (an invalid command, say) and counts as a failed attempt.
func (s *Scheduler) launchRefusedLocked(picked []candidate, err error) {
	stale := errors.Is(err, protocol.ErrUnknownOffer) || errors.Is(err, protocol.ErrOfferRescinded) ||
		errors.Is(err, protocol.ErrInsufficient) || errors.Is(err, framework.ErrNotRunning) ||
		errors.Is(err, protocol.ErrNotLeader) || errors.Is(err, protocol.ErrUnavailable)
	s.logger.Warn("launch refused", "tasks", len(picked), "stale_offers", stale, "error", err)
	if stale {
		return
	}
	for _, c := range picked {
		c.js.res.Failures++
		c.js.failures[c.task]++
		if c.js.failures[c.task] >= s.cfg.maxAttempts {
			s.failJobLocked(c.js, c.task, err)
		}
	}
}
