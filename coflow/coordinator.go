package coflow

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// scheduler is one ordering discipline behind the Coordinator. The
// coordinator owns the model (coflows, flows, per-port sets) and calls these
// hooks after updating it; each hook that returns true asks for the decision
// to be recomputed (docs/coflow.md: recompute on events only).
type scheduler interface {
	// admit places a newly registered coflow (phase, pilots, queue).
	admit(c *coflowState)
	// flowFinished follows a flow completion; freed says a port side lost
	// the coflow's last unfinished flow there (contention changed).
	flowFinished(c *coflowState, f int, freed bool) bool
	// progressed follows a progress report touching these coflows.
	progressed(touched []*coflowState) bool
	// drop forgets a coflow that finished or was deregistered.
	drop(c *coflowState)
	// decide appends the grants of the active coflows (by arrival) to d.
	decide(now time.Time, active []*coflowState, d *Decision)
}

// Coordinator is the global coflow coordinator: it takes events, each
// stamped with the caller's clock, and returns decisions. It is pure and not
// safe for concurrent use: drive it from one goroutine (or a simulator).
type Coordinator struct {
	cfg     Config
	sched   scheduler
	coflows map[CoflowID]*coflowState // registered, until Deregister
	active  []*coflowState            // unfinished, by arrival
	fabric  *fabric
	nextSeq uint64
	last    time.Time
	dirty   bool
	cur     *Decision
	stats   Stats
	touched []*coflowState // scratch for Progress
	lastHit *coflowState   // Finished's one-entry cache
}

// Stats counts the coordinator's work, for the simulator's load metrics.
type Stats struct {
	Events     int // accepted events
	Recomputes int // decisions computed (Epochs handed out)
}

// New returns a Coordinator for cfg.
func New(cfg Config) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	co := &Coordinator{
		cfg:     cfg,
		coflows: map[CoflowID]*coflowState{},
		fabric:  newFabric(cfg.Ports),
	}
	co.cfg = cfg
	switch cfg.Scheduler {
	case SchedulerPhilae:
		co.sched = newPhilae(&co.cfg, co.fabric)
	case SchedulerAalo, SchedulerAaloOracle:
		co.sched = newAalo(&co.cfg, cfg.Scheduler == SchedulerAaloOracle)
	case SchedulerSEBF, SchedulerFIFO:
		co.sched = newMADD(&co.cfg, cfg.Scheduler == SchedulerSEBF)
	case SchedulerSCF, SchedulerFair, SchedulerFairSplit:
		co.sched = newSimpleOrder(cfg.Scheduler)
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownScheduler, cfg.Scheduler)
	}
	return co, nil
}

// Config returns the configuration the coordinator runs with.
func (co *Coordinator) Config() Config { return co.cfg }

// Stats returns the work counters.
func (co *Coordinator) Stats() Stats { return co.stats }

func (co *Coordinator) tick(now time.Time) error {
	if now.Before(co.last) {
		return fmt.Errorf("%w: %v before %v", ErrTimeBackwards, now, co.last)
	}
	co.last = now
	return nil
}

// Register adds a coflow: its structure, and its flows' sizes for the
// clairvoyant schedulers. The next Decide recomputes.
func (co *Coordinator) Register(now time.Time, spec CoflowSpec) error {
	if now.Before(co.last) {
		return fmt.Errorf("register %s: %w", spec.ID, ErrTimeBackwards)
	}
	if _, dup := co.coflows[spec.ID]; dup {
		return fmt.Errorf("register %s: %w", spec.ID, ErrDuplicateCoflow)
	}
	c, err := newCoflowState(spec, co.cfg.Ports, co.nextSeq, now)
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	_ = co.tick(now)
	co.nextSeq++
	co.coflows[c.id] = c
	co.active = append(co.active, c)
	co.fabric.add(c)
	co.sched.admit(c)
	co.dirty = true
	co.stats.Events++
	return nil
}

// lookup resolves a flow reference.
func (co *Coordinator) lookup(ref FlowRef) (*coflowState, *flowState, error) {
	c, ok := co.coflows[ref.Coflow]
	if !ok {
		return nil, nil, fmt.Errorf("flow %s/%d: %w", ref.Coflow, ref.Flow, ErrUnknownCoflow)
	}
	if ref.Flow < 0 || ref.Flow >= len(c.flows) {
		return nil, nil, fmt.Errorf("flow %s/%d: %w", ref.Coflow, ref.Flow, ErrUnknownFlow)
	}
	return c, &c.flows[ref.Flow], nil
}

// FlowCompleted records that a flow finished with fc.Bytes bytes. Under
// philae it is the only routine report; a pilot's length feeds the size
// estimate.
func (co *Coordinator) FlowCompleted(now time.Time, fc FlowCompletion) error {
	c, f, err := co.lookup(fc.Flow)
	switch {
	case err != nil:
		return fmt.Errorf("flow completed: %w", err)
	case now.Before(co.last):
		return fmt.Errorf("flow completed %s/%d: %w", fc.Flow.Coflow, fc.Flow.Flow, ErrTimeBackwards)
	case f.finished:
		return fmt.Errorf("flow completed %s/%d: %w", fc.Flow.Coflow, fc.Flow.Flow, ErrFlowFinished)
	case fc.Bytes < 0:
		return fmt.Errorf("flow completed %s/%d: %w: %d", fc.Flow.Coflow, fc.Flow.Flow, ErrBadBytes, fc.Bytes)
	case fc.Pilot != f.pilot:
		return fmt.Errorf("flow completed %s/%d: %w: reported %v", fc.Flow.Coflow, fc.Flow.Flow,
			ErrPilotMismatch, fc.Pilot)
	}
	_ = co.tick(now)
	co.stats.Events++
	f.finished = true
	c.sentBytes(f, fc.Bytes)
	c.left--
	freed := co.fabric.finishFlow(c, f)
	piloting := c.phase == PhasePilot
	if co.sched.flowFinished(c, fc.Flow.Flow, freed) {
		co.dirty = true
	}
	if piloting && c.phase != PhasePilot {
		c.estimated = now
	}
	if c.left == 0 {
		co.retire(c)
		c.phase = PhaseFinished
	}
	return nil
}

// Progress records cumulative bytes sent by unfinished flows. Reports for
// flows that already finished are ignored (a report can race a completion).
// The batch is checked first and rejected whole if any entry is bad.
func (co *Coordinator) Progress(now time.Time, reports []FlowProgress) error {
	if now.Before(co.last) {
		return fmt.Errorf("progress: %w", ErrTimeBackwards)
	}
	for _, r := range reports {
		_, f, err := co.lookup(r.Flow)
		if err != nil {
			return fmt.Errorf("progress: %w", err)
		}
		if r.Sent < 0 || (!f.finished && r.Sent < f.sent) {
			return fmt.Errorf("progress %s/%d: %w: %d after %d", r.Flow.Coflow, r.Flow.Flow,
				ErrBadBytes, r.Sent, f.sent)
		}
	}
	_ = co.tick(now)
	co.stats.Events++
	stamp := co.fabric.fresh()
	co.touched = co.touched[:0]
	for _, r := range reports {
		c, f, _ := co.lookup(r.Flow)
		if f.finished || r.Sent == f.sent {
			continue
		}
		c.sentBytes(f, r.Sent)
		c.progressed = true
		if c.mark != stamp && c.phase != PhaseFinished {
			c.mark = stamp
			co.touched = append(co.touched, c)
		}
	}
	// Report order must not matter: hand the scheduler arrival order.
	slices.SortFunc(co.touched, func(a, b *coflowState) int { return cmp.Compare(a.seq, b.seq) })
	if len(co.touched) > 0 && co.sched.progressed(co.touched) {
		co.dirty = true
	}
	return nil
}

// Deregister forgets a coflow. A coflow with unfinished flows is withdrawn
// (its job ended or failed) and the next Decide recomputes.
func (co *Coordinator) Deregister(now time.Time, id CoflowID) error {
	c, ok := co.coflows[id]
	if !ok {
		return fmt.Errorf("deregister %s: %w", id, ErrUnknownCoflow)
	}
	if now.Before(co.last) {
		return fmt.Errorf("deregister %s: %w", id, ErrTimeBackwards)
	}
	_ = co.tick(now)
	co.stats.Events++
	if c.phase != PhaseFinished {
		co.fabric.remove(c)
		co.retire(c)
	}
	delete(co.coflows, id)
	if co.lastHit == c {
		co.lastHit = nil
	}
	return nil
}

// retire takes an unfinished-no-more or withdrawn coflow out of scheduling.
func (co *Coordinator) retire(c *coflowState) {
	co.sched.drop(c)
	i := slices.Index(co.active, c)
	co.active = slices.Delete(co.active, i, i+1)
	co.dirty = true
}

// Decide returns the current decision. It recomputes only when an event
// since the last decision asked for it or the slot rotation reached the
// previous decision's NextChange; otherwise it returns the same *Decision.
func (co *Coordinator) Decide(now time.Time) (*Decision, error) {
	if err := co.tick(now); err != nil {
		return nil, fmt.Errorf("decide: %w", err)
	}
	if !co.Stale(now) {
		return co.cur, nil
	}
	co.stats.Recomputes++
	d := &Decision{Epoch: uint64(co.stats.Recomputes), At: now, Ports: co.cfg.Ports, WorkingQueue: -1}
	co.sched.decide(now, co.active, d)
	co.cur, co.dirty = d, false
	return d, nil
}

// Stale reports whether Decide(now) would compute a new decision rather
// than return the current one. A caller that feeds sebf or fifo exact
// remaining sizes sends its progress report only then.
func (co *Coordinator) Stale(now time.Time) bool {
	return co.cur == nil || co.dirty || (!co.cur.NextChange.IsZero() && !now.Before(co.cur.NextChange))
}

// Finished reports whether a flow has finished. Unknown coflows count as
// finished, so a decision naming a deregistered coflow grants it nothing.
func (co *Coordinator) Finished(id CoflowID, flow int) bool {
	c := co.lastHit
	if c == nil || c.id != id {
		var ok bool
		if c, ok = co.coflows[id]; !ok {
			return true
		}
		co.lastHit = c
	}
	return flow < 0 || flow >= len(c.flows) || c.flows[flow].finished
}
