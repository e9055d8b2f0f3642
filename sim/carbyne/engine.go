package carbyne

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/internal/heapq"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// simEpoch is simulated time zero: the allocator and the planner take
// wall-clock instants, the engine counts from here.
var simEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// engine is one discrete-event run. Events are job arrivals, task ends and
// plan timers; all events at one instant are applied, then the instant's
// allocation round runs: shares are brought up to date, jobs with news
// declare again, Allocate makes offers and each job launches tasks on its
// offers and declines the rest.
type engine struct {
	cfg     Config
	pol     policy
	alloc   *offers.Allocator
	shares  *shareCalc
	planner *altruism.Planner
	epoch   time.Time

	dims     []string // resource names, sorted
	capacity []int64  // cluster capacity over dims
	agents   int

	jobs        []*simJob
	byFw        map[protocol.FrameworkID]*simJob
	active      []*simJob // arrived and unfinished, in arrival order
	nextArrival int
	now         time.Duration

	tasks      *heapq.Heap[*simTask] // running, the next to end first
	timers     *heapq.Heap[timer]    // plan timers, superseded ones included
	taskSeq    uint64
	sharesAt   time.Duration // when shares were last computed; -1 never
	jobsMoved  bool          // a job arrived or finished this instant
	clusterUse []int64

	rounds, plans int
	leftover      []float64
	// work launched on fair and on leftover offers: dominant share of the
	// cluster times run time, summed over tasks.
	fairWork, leftoverWork float64
	fair                   *jainTracker
}

func newEngine(cfg Config, w workload) (*engine, error) {
	pol := newPolicy(cfg.Scheduler)
	alloc, err := offers.New(offers.Config{LeftoverOrder: pol.leftoverOrder()})
	if err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, pol: pol, alloc: alloc, epoch: simEpoch, agents: w.machines,
		byFw: map[protocol.FrameworkID]*simJob{}, sharesAt: -1,
		tasks: heapq.New(endsFirst), timers: heapq.New(firesFirst)}
	e.dims = w.machine.Names()
	total := protocol.Resources{}
	for i := range w.machines {
		info := offers.AgentInfo{ID: protocol.AgentID(fmt.Sprintf("m%d", i)), Total: w.machine}
		if err := alloc.AddAgent(info); err != nil {
			return nil, err
		}
		total.AddInPlace(w.machine)
	}
	e.capacity = make([]int64, len(e.dims))
	for d, name := range e.dims {
		e.capacity[d] = total.Scalars[name]
	}
	e.clusterUse = make([]int64, len(e.dims))
	// Every scheduler's jobs get their shares A_k computed: those that
	// schedule by them use them, and the shortfall index measures every
	// scheduler against them.
	if e.shares, err = newShareCalc(total); err != nil {
		return nil, err
	}
	if e.planner, err = altruism.NewPlanner(altruism.Config{Altruism: cfg.Altruism, MinRemaining: altruism.DefaultMinRemaining}); err != nil {
		return nil, err
	}
	jobs := slices.Clone(w.jobs)
	slices.SortStableFunc(jobs, func(a, b jobSpec) int { return cmp.Compare(a.arrival, b.arrival) })
	for i, spec := range jobs {
		j, err := newSimJob(i, spec, e.dims, cfg.Seed)
		if err != nil {
			return nil, err
		}
		e.jobs = append(e.jobs, j)
		e.byFw[j.fw] = j
	}
	e.fair = newJainTracker(e.capacity, len(e.jobs))
	return e, nil
}

func (e *engine) at(t time.Duration) time.Time { return e.epoch.Add(t) }

// run plays every event and returns the result.
func (e *engine) run() (Result, error) {
	for {
		more, err := e.advance()
		if err != nil {
			return Result{}, err
		}
		if !more {
			break
		}
	}
	if len(e.active) > 0 || e.nextArrival < len(e.jobs) {
		return Result{}, fmt.Errorf("%w: stuck at %v with %d jobs unfinished and nothing running",
			ErrBadSimulation, e.now, len(e.active)+len(e.jobs)-e.nextArrival)
	}
	return e.result(), nil
}

// advance moves to the next event instant and plays it; it reports false
// when no event is left.
func (e *engine) advance() (bool, error) {
	t, ok := e.nextEvent()
	if !ok {
		return false, nil
	}
	if t < e.now {
		return false, fmt.Errorf("%w: time went back from %v to %v", ErrBadSimulation, e.now, t)
	}
	e.now = t
	return true, e.step()
}

// nextEvent returns the time of the earliest pending event.
func (e *engine) nextEvent() (time.Duration, bool) {
	var t time.Duration
	ok := false
	consider := func(x time.Duration) {
		if !ok || x < t {
			t, ok = x, true
		}
	}
	if t, ok := e.tasks.Peek(); ok {
		consider(t.end)
	}
	if e.nextArrival < len(e.jobs) {
		consider(e.jobs[e.nextArrival].spec.arrival)
	}
	for tm, ok := e.timers.Peek(); ok && e.jobs[tm.job].timer != tm.at; tm, ok = e.timers.Peek() {
		e.timers.Pop() // superseded
	}
	if tm, ok := e.timers.Peek(); ok {
		consider(tm.at)
	}
	return t, ok
}

// step applies the events at e.now and runs the instant's round.
func (e *engine) step() error {
	e.jobsMoved = false
	if err := e.finishTasks(); err != nil {
		return err
	}
	if err := e.arrive(); err != nil {
		return err
	}
	for tm, ok := e.timers.Peek(); ok && tm.at == e.now; tm, ok = e.timers.Peek() {
		e.timers.Pop()
		if j := e.jobs[tm.job]; j.timer == tm.at {
			j.timer = -1
			j.replan = !j.done
		}
	}
	if len(e.active) == 0 {
		return nil
	}
	if err := e.updateShares(); err != nil {
		return err
	}
	for _, j := range e.active {
		if !j.replan {
			continue
		}
		j.replan = false
		d, err := e.pol.declare(e, j)
		if err != nil {
			return fmt.Errorf("job %s: %w", j.name, err)
		}
		if err := e.declare(j, d); err != nil {
			return fmt.Errorf("job %s: %w", j.name, err)
		}
	}
	e.rounds++
	return e.allocate()
}

// declare hands j's declaration to the allocator. An empty one keeps the
// job declared with nothing pending: an undeclared framework would be
// offered whole agents.
func (e *engine) declare(j *simJob, d offers.Declaration) error {
	if len(d.Demand)+len(d.MustStart)+len(d.Optional) > 0 {
		return e.alloc.Declare(j.fw, d)
	}
	if err := e.alloc.SetDemand(j.fw, nil); err != nil {
		return err
	}
	return e.alloc.SetLeftoverDemand(j.fw, nil, 0)
}

// updateShares recomputes the shares A_k when a job arrived or finished,
// or when the share interval has passed, and marks the jobs whose share
// changed for a new declaration.
func (e *engine) updateShares() error {
	interval := e.cfg.ShareInterval
	if !e.pol.usesShares() {
		interval = DefaultConfig().ShareInterval // for the shortfall index only
	}
	if !e.jobsMoved && e.sharesAt >= 0 && e.now-e.sharesAt < interval {
		return nil
	}
	e.sharesAt = e.now
	for _, j := range e.active {
		if j.shareDirty {
			j.shareDirty = false
			if err := e.shares.set(j.fw, j.remaining(e.dims, e.cfg.ShareCap == ShareCapRunnable)); err != nil {
				return err
			}
		}
	}
	all := e.shares.shares()
	for _, j := range e.active {
		s := all[j.fw]
		if s.Equal(j.share) {
			continue
		}
		j.share = s
		j.replan = j.replan || e.pol.usesShares()
		share := make([]int64, len(e.dims))
		for d, name := range e.dims {
			share[d] = s.Scalars[name]
		}
		e.fair.entitle(j, share, e.now)
	}
	return nil
}
