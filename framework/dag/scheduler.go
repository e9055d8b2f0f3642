package dag

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// Scheduler runs DAG jobs with altruism on a framework.Driver; see the
// package documentation. It implements framework.Scheduler. To handle
// callbacks of its own, a framework embeds it and calls the embedded
// method from its override.
type Scheduler struct {
	cfg    config
	logger hclog.Logger
	// greedy plans jobs while the share is unknown (P(altruism) 0).
	greedy *altruism.Planner

	mu     sync.Mutex
	drv    driver // the driver of the latest callback; nil before Registered
	closed bool
	seq    int
	jobs   map[string]*jobState // every submitted job, ended ones too
	active []*jobState          // jobs not ended, in submission order
	tasks  map[protocol.TaskID]*attempt
	// share is the framework's fair share; empty when unknown.
	share protocol.Resources
	// Demand as last declared: sent is false until a declaration
	// succeeded, and after a launch lowered the leader's copy.
	last       protocol.DemandRequest
	sent       bool
	suppressed bool
	timer      Timer
	timerAt    time.Time
	// timerBackoff is the plan timer's least delay while plans are due
	// again as soon as they are made (zero: minTimer).
	timerBackoff time.Duration
	stats        Stats
	notify       []Result // ended jobs for onDone, delivered after unlocking
}

var _ framework.Scheduler = (*Scheduler)(nil)

// Stats are a scheduler's counters since New.
type Stats struct {
	// FairOffers and LeftoverOffers count the offers received of each
	// kind.
	FairOffers, LeftoverOffers int
	// FairTasks and LeftoverTasks count the task attempts launched on
	// each kind of offer.
	FairTasks, LeftoverTasks int
	// DeclinedLeftover sums what the scheduler gave to the leftover pool
	// of the fair offers it received: offers declined with
	// DeclineLeftover, and what its launches left unused of fair offers.
	DeclinedLeftover protocol.Resources
	// DeclinedOffers counts offers declined, of either kind.
	DeclinedOffers int
	// ShareUpdates counts the share updates received; Share is the
	// latest fair share (empty while unknown).
	ShareUpdates int
	Share        protocol.Resources
	// Plans counts the plans of all jobs; Declarations the demand
	// reports sent.
	Plans, Declarations int
}

// New returns a scheduler with no jobs.
func New(opts ...Option) (*Scheduler, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	greedyCfg := cfg.planner
	greedyCfg.Altruism = 0
	greedy, err := altruism.NewPlanner(greedyCfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	return &Scheduler{
		cfg:    cfg,
		logger: cfg.logger.Named("dag"),
		greedy: greedy,
		jobs:   map[string]*jobState{},
		tasks:  map[protocol.TaskID]*attempt{},
	}, nil
}

// Submit adds a job. It is planned at once, and its demand declared if
// the driver has registered (with ctx; otherwise at registration). The
// job runs until it ends; Wait returns its Result.
func (s *Scheduler) Submit(ctx context.Context, j Job) error {
	s.mu.Lock()
	defer s.unlock()
	if s.closed {
		return ErrClosed
	}
	if _, dup := s.jobs[j.ID]; dup {
		return fmt.Errorf("%w: %s", ErrDuplicateJob, j.ID)
	}
	js, err := newJobState(j, s.seq, s.cfg, s.cfg.clock.Now())
	if err != nil {
		return err
	}
	s.seq++
	s.jobs[j.ID] = js
	s.active = append(s.active, js)
	s.logger.Debug("job submitted", "job_id", j.ID, "stages", len(j.Spec.Stages))
	s.reshareLocked()
	s.replanLocked(s.active...)
	s.syncLocked(ctx)
	return nil
}

// Wait blocks until the job has ended, or ctx ends, and returns its
// Result and Result.Err.
func (s *Scheduler) Wait(ctx context.Context, jobID string) (Result, error) {
	s.mu.Lock()
	js, ok := s.jobs[jobID]
	s.mu.Unlock()
	if !ok {
		return Result{}, fmt.Errorf("%w: %s", ErrUnknownJob, jobID)
	}
	select {
	case <-js.done:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return js.res, js.res.Err
}

// Result returns a job's Result so far, and whether it has ended.
func (s *Scheduler) Result(jobID string) (Result, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	js, ok := s.jobs[jobID]
	if !ok {
		return Result{}, false, fmt.Errorf("%w: %s", ErrUnknownJob, jobID)
	}
	return js.res, js.ended, nil
}

// Results returns the Results of the jobs that have ended, in submission
// order.
func (s *Scheduler) Results() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Result
	for _, js := range s.jobs {
		if js.ended {
			out = append(out, js.res)
		}
	}
	slices.SortFunc(out, func(a, b Result) int { return s.jobs[a.Job].seq - s.jobs[b.Job].seq })
	return out
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.DeclinedLeftover = s.stats.DeclinedLeftover.Clone()
	st.Share = s.share.Clone()
	return st
}

// Close stops the plan timer and ends every job still running with
// ErrClosed; later callbacks are ignored. It neither kills tasks nor
// withdraws the framework's demand: tear the framework down, or stop its
// driver, for that.
func (s *Scheduler) Close() {
	s.mu.Lock()
	defer s.unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	for _, js := range slices.Clone(s.active) {
		s.endLocked(js, ErrClosed)
	}
}

// unlock releases s.mu and then reports the jobs that ended meanwhile to
// the WithOnDone callback.
func (s *Scheduler) unlock() {
	done := s.notify
	s.notify = nil
	s.mu.Unlock()
	if s.cfg.onDone != nil {
		for _, r := range done {
			s.cfg.onDone(r)
		}
	}
}

// endLocked ends job js with err (nil: success).
func (s *Scheduler) endLocked(js *jobState, err error) {
	if js.ended {
		return
	}
	js.ended = true
	now := s.cfg.clock.Now()
	js.res.Err = err
	js.res.Ended = now
	js.res.JCT = now.Sub(js.res.Submitted)
	for id := range js.running {
		delete(s.tasks, id)
	}
	s.active = slices.DeleteFunc(s.active, func(x *jobState) bool { return x == js })
	close(js.done)
	s.notify = append(s.notify, js.res)
	if err != nil {
		s.logger.Warn("job ended", "job_id", js.spec.ID, "jct", js.res.JCT, "error", err)
	} else {
		s.logger.Info("job finished", "job_id", js.spec.ID, "jct", js.res.JCT,
			"fair_tasks", js.res.FairTasks, "leftover_tasks", js.res.LeftoverTasks)
	}
}

// callCtx bounds a call the scheduler makes on its own.
func (s *Scheduler) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.cfg.callTimeout)
}

// Registered declares the demand of the jobs submitted so far (or
// suppresses offers if there are none).
func (s *Scheduler) Registered(d *framework.Driver, _ protocol.FrameworkID) { s.registered(d) }

func (s *Scheduler) registered(d driver) {
	s.mu.Lock()
	defer s.unlock()
	s.drv = d
	if s.closed {
		return
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	s.syncLocked(ctx)
}

// Reregistered notes that the demand must be declared in full at the
// next report; the driver itself declares its copy of the demand and the
// suppression again, and reconciles the tasks.
func (s *Scheduler) Reregistered(d *framework.Driver) {
	s.mu.Lock()
	s.drv = d
	s.sent = false
	s.mu.Unlock()
}

// Disconnected does nothing.
func (s *Scheduler) Disconnected(*framework.Driver) {}

// Offers launches tasks on the offers and declines the rest as leftover.
func (s *Scheduler) Offers(d *framework.Driver, offers []protocol.Offer) { s.offers(d, offers) }

// OfferRescinded does nothing: the scheduler never holds offers.
func (s *Scheduler) OfferRescinded(*framework.Driver, protocol.OfferID) {}

// StatusUpdate records a task's end and plans its job again.
func (s *Scheduler) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) { s.status(d, st) }

// ShareUpdate takes the framework's new fair share and plans every job
// again.
func (s *Scheduler) ShareUpdate(d *framework.Driver, ev protocol.ShareUpdateEvent) {
	s.shareUpdate(d, ev)
}

// Error logs the error.
func (s *Scheduler) Error(_ *framework.Driver, err error) {
	s.logger.Error("framework error", "error", err)
}
