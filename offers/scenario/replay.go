package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// Replay plays a scenario's timeline under an allocation policy, driving
// the allocator in the order the master's leader does (docs/hdrf.md,
// "Preemption replays"). At each instant something happens, in this order:
//
//  1. tasks whose duration is over end (Recover);
//  2. roles' guarantees start and leaves arrive (AddFramework, SetDemand);
//  3. allocation rounds run until one makes no offer, every offer accepted
//     whole, as the master kicks a round after every change;
//  4. at every multiple of the preemption interval, and again at each
//     warning's deadline, PlanPreemption decides: new victims are warned
//     with the deadline, kept ones whose deadline has passed are killed
//     (Recover; the task goes back to its leaf's pending tasks, to run
//     again from the start) and released ones have their warning
//     withdrawn; after kills, allocation rounds run again;
//  5. the report samples every node.
//
// The replay ends at spec.Until, or, without it, once nothing more can
// happen: no arrival or task end ahead, no warning outstanding, and a
// decision that took nothing with every need past its delay.
func Replay(spec Spec, policy offers.Policy) (Report, error) {
	return replay(spec, policy, 1)
}

// ErrUnsettled reports a replay without Until that still changes after
// maxSteps instants (tasks with durations and unbounded demand never
// settle).
var ErrUnsettled = errors.New("scenario: the replay does not settle; set until")

// maxSteps bounds the instants a replay without Until visits.
const maxSteps = 100_000

// task is a running task of a replay.
type task struct {
	id        protocol.TaskID
	leaf      string
	agent     protocol.AgentID
	started   time.Duration
	ends      time.Duration // zero: runs until killed
	revocable bool
	warned    bool
	deadline  time.Duration
}

// replayer is one replay's state.
type replayer struct {
	r       *Run
	pre     Preemption
	start   time.Time
	t       time.Duration // the current instant, since start
	tasks   []*task       // running, in launch order
	byID    map[protocol.TaskID]*task
	seq     int
	pending map[string]int64 // tasks of a leaf not launched yet
	next    int              // r.arrivals[next:] are ahead
	planAt  []time.Duration  // decisions due at deadlines, ascending
	rep     *recorder
}

func replay(spec Spec, policy offers.Policy, unit float64) (Report, error) {
	r, err := New(spec, policy)
	if err != nil {
		return Report{}, err
	}
	p := &replayer{r: r, pre: DefaultPreemption(), start: r.now, byID: map[protocol.TaskID]*task{},
		pending: map[string]int64{}}
	if spec.Preemption != nil {
		p.pre = *spec.Preemption
	}
	for _, leaf := range r.leaves {
		if r.nodes[leaf].Arrival == 0 {
			p.pending[leaf] = r.nodes[leaf].Tasks
		}
	}
	p.rep = newRecorder(r, unit)
	if err := p.run(); err != nil {
		return Report{}, err
	}
	return p.rep.report(string(r.Alloc.Policy()), p.pre, p.t), nil
}

func (p *replayer) now() time.Time { return p.start.Add(p.t) }

func (p *replayer) run() error {
	until := p.r.spec.Until
	for step := 0; ; step++ {
		if until == 0 && step >= maxSteps {
			return fmt.Errorf("%w (%d instants, at %v)", ErrUnsettled, step, p.t)
		}
		if err := p.endTasks(); err != nil {
			return err
		}
		if err := p.arrive(); err != nil {
			return err
		}
		if err := p.fill(); err != nil {
			return err
		}
		quiet, err := p.decide()
		if err != nil {
			return err
		}
		p.rep.sample(p.t)
		if until > 0 && p.t >= until {
			return nil
		}
		if until == 0 && quiet && p.idle() {
			return nil
		}
		p.t = p.nextInstant(until)
	}
}

// decide runs the decisions due now: the interval's, and those of the
// deadlines that fall now (a zero deadline decides again at once). quiet
// reports that the last one took nothing and every need was past its delay.
func (p *replayer) decide() (quiet bool, err error) {
	due := p.t%p.pre.Interval == 0
	for i := 0; due || p.popDeadline(); i++ {
		if i > 1000 {
			return false, fmt.Errorf("scenario: preemption decisions do not settle at %v", p.t)
		}
		due = false
		if quiet, err = p.plan(); err != nil {
			return false, err
		}
	}
	return quiet, nil
}

func (p *replayer) popDeadline() bool {
	if len(p.planAt) > 0 && p.planAt[0] <= p.t {
		p.planAt = p.planAt[1:]
		return true
	}
	return false
}

// plan runs one preemption decision and carries it out as the master does.
func (p *replayer) plan() (quiet bool, err error) {
	list := make([]offers.RunningTask, 0, len(p.tasks))
	for _, tk := range p.tasks {
		list = append(list, offers.RunningTask{FrameworkID: protocol.FrameworkID(tk.leaf), TaskID: tk.id,
			AgentID: tk.agent, Resources: p.r.demand[tk.leaf], Revocable: tk.revocable,
			StartedAt: p.start.Add(tk.started), Warned: tk.warned})
	}
	plan := p.r.Alloc.PlanPreemption(list, p.now())
	p.rep.plans++
	for _, v := range plan.Preempt {
		tk := p.byID[v.TaskID]
		tk.warned, tk.deadline = true, p.t+p.pre.Deadline
		p.rep.warn(tk.leaf, v.For)
	}
	if len(plan.Preempt) > 0 {
		p.schedule(p.t + p.pre.Deadline)
	}
	var kill []*task
	for _, v := range plan.Keep {
		if tk := p.byID[v.TaskID]; tk != nil && tk.warned && tk.deadline <= p.t {
			kill = append(kill, tk)
		}
	}
	for _, v := range plan.Release {
		if tk := p.byID[v.TaskID]; tk != nil && tk.warned {
			tk.warned = false
			p.rep.withdraw(tk.leaf)
		}
	}
	for _, tk := range kill {
		if err := p.kill(tk); err != nil {
			return false, err
		}
	}
	if len(kill) > 0 {
		if err := p.fill(); err != nil {
			return false, err
		}
	}
	quiet = len(plan.Preempt) == 0 && len(plan.Keep) == 0
	for _, n := range plan.Needs {
		quiet = quiet && !p.now().Before(n.EligibleAt)
	}
	return quiet, nil
}

// schedule asks for a decision at d.
func (p *replayer) schedule(d time.Duration) {
	i := 0
	for i < len(p.planAt) && p.planAt[i] < d {
		i++
	}
	if i < len(p.planAt) && p.planAt[i] == d {
		return
	}
	p.planAt = append(p.planAt[:i], append([]time.Duration{d}, p.planAt[i:]...)...)
}

// idle reports that nothing is ahead but decisions at the interval.
func (p *replayer) idle() bool {
	if p.next < len(p.r.arrivals) || len(p.planAt) > 0 {
		return false
	}
	for _, tk := range p.tasks {
		if tk.ends > 0 || tk.warned {
			return false
		}
	}
	return true
}

// nextInstant is the next time something is due: a decision, an arrival,
// a task's end or the end of the replay.
func (p *replayer) nextInstant(until time.Duration) time.Duration {
	next := (p.t/p.pre.Interval + 1) * p.pre.Interval
	if p.next < len(p.r.arrivals) {
		next = min(next, p.r.arrivals[p.next].at)
	}
	if len(p.planAt) > 0 {
		next = min(next, p.planAt[0])
	}
	for _, tk := range p.tasks {
		if tk.ends > 0 {
			next = min(next, tk.ends)
		}
	}
	if until > 0 {
		next = min(next, until)
	}
	return next
}

// arrive starts the guarantees and joins the leaves due now.
func (p *replayer) arrive() error {
	for ; p.next < len(p.r.arrivals) && p.r.arrivals[p.next].at <= p.t; p.next++ {
		a := p.r.arrivals[p.next]
		if a.guarantee != "" {
			if err := p.r.Alloc.SetRoleGuarantee(a.guarantee, protocol.Scalars(p.r.nodes[a.guarantee].Guarantee)); err != nil {
				return err
			}
			continue
		}
		if err := p.r.join(a.leaf, a.weight); err != nil {
			return err
		}
		p.pending[a.leaf] = p.r.nodes[a.leaf].Tasks
	}
	return nil
}

// fill runs allocation rounds now until one makes no offer, accepting
// every offer whole.
func (p *replayer) fill() error {
	now := p.now()
	for {
		d := p.r.Alloc.Allocate(now)
		if len(d.Offers) == 0 {
			return nil
		}
		for _, o := range d.Offers {
			leaf := string(o.FrameworkID)
			if o.Tasks <= 0 {
				return fmt.Errorf("scenario: offer %s to %s sized for no task", o.ID, leaf)
			}
			launches := make([]protocol.Resources, o.Tasks)
			for i := range launches {
				launches[i] = p.r.demand[leaf]
			}
			if _, err := p.r.Alloc.Accept(o.FrameworkID, []protocol.OfferID{o.ID}, launches, now); err != nil {
				return fmt.Errorf("accept %s: %w", o.ID, err)
			}
			for range launches {
				p.launch(leaf, o)
			}
		}
	}
}

func (p *replayer) launch(leaf string, o offers.Offer) {
	p.seq++
	tk := &task{id: protocol.TaskID("t" + strconv.Itoa(p.seq)), leaf: leaf, agent: o.AgentID, started: p.t,
		revocable: o.Kind == offers.KindLeftover}
	if d := p.r.nodes[leaf].Duration; d > 0 {
		tk.ends = p.t + d
	}
	p.tasks = append(p.tasks, tk)
	p.byID[tk.id] = tk
	p.r.tasks[leaf]++
	if p.pending[leaf] != offers.Unlimited {
		p.pending[leaf]--
	}
}

// endTasks ends the tasks whose duration is over, in launch order.
func (p *replayer) endTasks() error {
	for i := 0; i < len(p.tasks); {
		tk := p.tasks[i]
		if tk.ends == 0 || tk.ends > p.t {
			i++
			continue
		}
		if err := p.remove(tk); err != nil {
			return err
		}
		p.rep.finish(tk.leaf)
	}
	return nil
}

// kill ends a task at its deadline; it goes back to its leaf's pending
// tasks.
func (p *replayer) kill(tk *task) error {
	if err := p.remove(tk); err != nil {
		return err
	}
	p.rep.kill(tk.leaf)
	if p.pending[tk.leaf] == offers.Unlimited {
		return nil
	}
	p.pending[tk.leaf]++
	return p.r.Alloc.SetDemand(protocol.FrameworkID(tk.leaf),
		[]offers.Demand{{Resources: p.r.demand[tk.leaf], Count: p.pending[tk.leaf]}})
}

// remove releases a running task's resources.
func (p *replayer) remove(tk *task) error {
	for i, x := range p.tasks {
		if x == tk {
			p.tasks = append(p.tasks[:i], p.tasks[i+1:]...)
			break
		}
	}
	delete(p.byID, tk.id)
	p.r.tasks[tk.leaf]--
	return p.r.Alloc.Recover(protocol.FrameworkID(tk.leaf), tk.agent, p.r.demand[tk.leaf])
}
