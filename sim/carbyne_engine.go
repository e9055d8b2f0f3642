package sim

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// carbyneEpoch is simulated time zero: the allocator and the planner take
// wall-clock instants, the engine counts from here.
var carbyneEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// maxPasses bounds the allocation passes of one round: a pass after the
// first only runs when the one before launched tasks and handed some
// resources back.
const maxPasses = 3

// engine is one discrete-event run. Events are job arrivals, task ends and
// plan timers; all events at one instant are applied, then the instant's
// allocation round runs: shares are brought up to date, jobs with news
// declare again, Allocate makes offers and each job launches tasks on its
// offers and declines the rest.
type engine struct {
	cfg     CarbyneConfig
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

	tasks      taskHeap
	timers     timerHeap
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

func newEngine(cfg CarbyneConfig, w carbyneWorkload) (*engine, error) {
	pol := newPolicy(cfg.Scheduler)
	alloc, err := offers.New(offers.Config{LeftoverOrder: pol.leftoverOrder()})
	if err != nil {
		return nil, err
	}
	e := &engine{cfg: cfg, pol: pol, alloc: alloc, epoch: carbyneEpoch, agents: w.machines,
		byFw: map[protocol.FrameworkID]*simJob{}, sharesAt: -1}
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
	if pol.usesShares() {
		if e.shares, err = newShareCalc(total); err != nil {
			return nil, err
		}
	}
	if e.planner, err = altruism.NewPlanner(altruism.Config{Altruism: cfg.Altruism, MinRemaining: altruism.DefaultMinRemaining}); err != nil {
		return nil, err
	}
	jobs := slices.Clone(w.jobs)
	slices.SortStableFunc(jobs, func(a, b carbyneJobSpec) int { return cmp.Compare(a.arrival, b.arrival) })
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
func (e *engine) run() (CarbyneResult, error) {
	for {
		more, err := e.advance()
		if err != nil {
			return CarbyneResult{}, err
		}
		if !more {
			break
		}
	}
	if len(e.active) > 0 || e.nextArrival < len(e.jobs) {
		return CarbyneResult{}, fmt.Errorf("%w: stuck at %v with %d jobs unfinished and nothing running",
			ErrBadCarbyne, e.now, len(e.active)+len(e.jobs)-e.nextArrival)
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
		return false, fmt.Errorf("%w: time went back from %v to %v", ErrBadCarbyne, e.now, t)
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
	if len(e.tasks) > 0 {
		consider(e.tasks[0].end)
	}
	if e.nextArrival < len(e.jobs) {
		consider(e.jobs[e.nextArrival].spec.arrival)
	}
	for len(e.timers) > 0 && e.jobs[e.timers[0].job].timer != e.timers[0].at {
		heap.Pop(&e.timers) // superseded
	}
	if len(e.timers) > 0 {
		consider(e.timers[0].at)
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
	for len(e.timers) > 0 && e.timers[0].at == e.now {
		tm := heap.Pop(&e.timers).(timer)
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

// finishTasks ends the tasks that end now.
func (e *engine) finishTasks() error {
	for len(e.tasks) > 0 && e.tasks[0].end == e.now {
		t := heap.Pop(&e.tasks).(*simTask)
		j := t.job
		st := &j.stage[t.stage]
		if err := e.alloc.Recover(j.fw, t.agent, st.demand); err != nil {
			return err
		}
		e.fair.advance(j, e.now)
		subVec(j.used, st.need)
		subVec(e.clusterUse, st.need)
		e.fair.set(j, e.now)
		st.running--
		st.finished++
		st.sumStart -= t.start
		if st.finished == st.tasks {
			for _, c := range st.children {
				j.stage[c].waiting--
			}
		}
		if j.plan != nil {
			if err := j.plan.TaskFinished(altruism.TaskID{Stage: st.name, Index: t.index}, e.at(e.now)); err != nil {
				return err
			}
		}
		j.replan, j.shareDirty = true, true
		if j.unfinished--; j.unfinished == 0 {
			if err := e.complete(j); err != nil {
				return err
			}
		}
	}
	return nil
}

// complete retires a finished job.
func (e *engine) complete(j *simJob) error {
	j.done, j.finish, j.replan, j.timer = true, e.now, false, -1
	e.jobsMoved = true
	e.active = slices.DeleteFunc(e.active, func(x *simJob) bool { return x == j })
	if _, err := e.alloc.RemoveFramework(j.fw); err != nil {
		return err
	}
	if e.shares != nil {
		return e.shares.remove(j.fw)
	}
	return nil
}

// arrive admits the jobs that arrive now.
func (e *engine) arrive() error {
	for e.nextArrival < len(e.jobs) && e.jobs[e.nextArrival].spec.arrival == e.now {
		j := e.jobs[e.nextArrival]
		e.nextArrival++
		if err := e.alloc.AddFramework(offers.FrameworkInfo{ID: j.fw}); err != nil {
			return err
		}
		if e.shares != nil {
			if err := e.shares.add(j.fw); err != nil {
				return err
			}
		}
		j.arrived, j.replan, j.shareDirty = true, true, true
		e.active = append(e.active, j)
		e.jobsMoved = true
	}
	return nil
}

// updateShares recomputes the shares A_k when a job arrived or finished,
// or when the share interval has passed, and marks the jobs whose share
// changed for a new declaration.
func (e *engine) updateShares() error {
	if e.shares == nil {
		return nil
	}
	if !e.jobsMoved && e.sharesAt >= 0 && e.now-e.sharesAt < e.cfg.ShareInterval {
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
		if s := all[j.fw]; !s.Equal(j.share) {
			j.share = s
			j.replan = true
		}
	}
	return nil
}

// setTimer arms j's plan timer at t if t is still to come.
func (e *engine) setTimer(j *simJob, t time.Duration) {
	if t <= e.now {
		return
	}
	j.timer = t
	heap.Push(&e.timers, timer{at: t, job: j.idx})
}

// allocate runs the round's allocation passes and launches tasks.
func (e *engine) allocate() error {
	for pass := 0; pass < maxPasses; pass++ {
		d := e.alloc.Allocate(e.at(e.now))
		if len(d.Offers) == 0 {
			return nil
		}
		if e.leftover == nil {
			e.recordLeftover(d.Offers)
		}
		launched, returned := 0, false
		for _, o := range d.Offers {
			n, back, err := e.take(o)
			if err != nil {
				return err
			}
			launched += n
			returned = returned || back
		}
		if launched == 0 || !returned {
			return nil
		}
	}
	return nil
}

// take launches tasks of the offer's job on it, most urgent first among
// those its quota for the offer's kind allows, and declines it if none
// fits. It returns how many tasks it launched and whether any of the
// offer went back to the free pool.
func (e *engine) take(o offers.Offer) (int, bool, error) {
	j := e.byFw[o.FrameworkID]
	q := j.fairQ
	if o.Kind == offers.KindLeftover {
		q = j.leftQ
	}
	free := make([]int64, len(e.dims))
	for d, name := range e.dims {
		free[d] = o.Resources.Scalars[name]
	}
	var tasks []protocol.Resources
	var stages []int
	for i := range q {
		st := &j.stage[q[i].stage]
		for k := 0; q[i].n > 0 && k < st.unstarted && fitsVec(st.need, free); k++ {
			subVec(free, st.need)
			tasks = append(tasks, st.demand)
			stages = append(stages, q[i].stage)
			q[i].n--
		}
	}
	if len(tasks) == 0 {
		ids := []protocol.OfferID{o.ID}
		if e.pol.declineLeftover(o.Kind) {
			return 0, true, e.alloc.DeclineLeftover(j.fw, ids, 0, e.at(e.now))
		}
		return 0, true, e.alloc.Decline(j.fw, ids, 0, e.at(e.now))
	}
	if _, err := e.alloc.AcceptTasks(j.fw, []protocol.OfferID{o.ID}, tasks, e.at(e.now)); err != nil {
		return 0, false, err
	}
	e.fair.advance(j, e.now)
	for _, s := range stages {
		if err := e.launch(j, s, o.AgentID); err != nil {
			return 0, false, err
		}
	}
	e.fair.set(j, e.now)
	for _, s := range stages {
		w := e.dominant(j.stage[s].need) * j.stage[s].dur.Seconds()
		if o.Kind == offers.KindLeftover {
			e.leftoverWork += w
		} else {
			e.fairWork += w
		}
	}
	back := false
	for _, x := range free {
		back = back || x > 0
	}
	return len(tasks), back, nil
}

// launch starts the next task of stage s of j on agent.
func (e *engine) launch(j *simJob, s int, agent protocol.AgentID) error {
	st := &j.stage[s]
	idx := st.next
	st.next++
	st.unstarted--
	st.running++
	st.sumStart += e.now
	st.lastStart = e.now
	addVec(j.used, st.need)
	addVec(e.clusterUse, st.need)
	if j.plan != nil {
		if err := j.plan.TaskStarted(altruism.TaskID{Stage: st.name, Index: idx}, e.at(e.now)); err != nil {
			return err
		}
	}
	e.taskSeq++
	heap.Push(&e.tasks, &simTask{end: e.now + st.dur, start: e.now, job: j, stage: s, index: idx, agent: agent, seq: e.taskSeq})
	return nil
}

// recordLeftover records the first round's leftover pool: what the fair
// offers leave free, then what is left after each leftover offer, as the
// largest fraction over resources.
func (e *engine) recordLeftover(os []offers.Offer) {
	pool := make([]int64, len(e.dims))
	for d := range pool {
		pool[d] = e.capacity[d] - e.clusterUse[d]
	}
	sub := func(r protocol.Resources) {
		for d, name := range e.dims {
			pool[d] -= r.Scalars[name]
		}
	}
	for _, o := range os {
		if o.Kind != offers.KindLeftover {
			sub(o.Resources)
		}
	}
	e.leftover = append(e.leftover, e.fraction(pool))
	for _, o := range os {
		if o.Kind == offers.KindLeftover {
			sub(o.Resources)
			e.leftover = append(e.leftover, e.fraction(pool))
		}
	}
}

// fraction is the largest share of the cluster v holds in any resource.
func (e *engine) fraction(v []int64) float64 {
	f := 0.0
	for d, x := range v {
		if e.capacity[d] > 0 {
			f = max(f, float64(x)/float64(e.capacity[d]))
		}
	}
	return f
}

// simTask is a running task.
type simTask struct {
	end, start time.Duration
	job        *simJob
	stage      int
	index      int
	agent      protocol.AgentID
	seq        uint64
}

type taskHeap []*simTask

func (h taskHeap) Len() int { return len(h) }
func (h taskHeap) Less(a, b int) bool {
	if h[a].end != h[b].end {
		return h[a].end < h[b].end
	}
	return h[a].seq < h[b].seq
}
func (h taskHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *taskHeap) Push(x any)   { *h = append(*h, x.(*simTask)) }
func (h *taskHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// timer is a job's plan timer.
type timer struct {
	at  time.Duration
	job int
}

type timerHeap []timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].job < h[b].job
}
func (h timerHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
