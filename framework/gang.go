package framework

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// Defaults of GangSpec fields left zero.
const (
	DefaultGangTimeout = 30 * time.Second
	DefaultGangRefuse  = time.Second
)

// GangSpec describes tasks that must start together, all or none, across
// agents: an MPI job, a parameter-server group.
type GangSpec struct {
	// GroupID names the gang; every task gets it as its GroupID, and each
	// agent's share is one launch group.
	GroupID string
	// Tasks are the gang's tasks, without AgentID; their own hard
	// constraints apply.
	Tasks []protocol.TaskInfo
	// Ports is how many ports each task gets from its agent's offers.
	Ports int
	// Constraints apply to the whole gang: group operators (unique, same,
	// max_per over an attribute) and per-task operators for every task.
	Constraints []protocol.Constraint
	// Timeout is how long one attempt may hold offers without finding a
	// placement (default DefaultGangTimeout). Each attempt's deadline is
	// drawn from [3/4 Timeout, Timeout] so that competing gangs do not
	// give up together.
	Timeout time.Duration
	// Attempts is how many times the gang tries, each with a fresh
	// deadline (default 1; negative: until canceled).
	Attempts int
	// Refuse is the refuse filter on the offers a gang releases when an
	// attempt times out (default DefaultGangRefuse): long enough for
	// someone else to take them.
	Refuse time.Duration
	// Backoff spaces attempts: after a timeout the gang waits Refuse plus
	// Backoff.Delay(attempt) before it tries again, holding nothing and
	// declaring no demand meanwhile. The zero value grows from 100ms to
	// Timeout.
	Backoff Backoff
	// NoDemand stops the gang from declaring its demand; the scheduler
	// then makes sure offers arrive.
	NoDemand bool
	// Prepare, when set, is called once a placement is found and before
	// anything is launched, with the placed tasks in the order of Tasks:
	// AgentID set and the ports given added to their resources. It may
	// change what the tasks run (command, environment, labels), e.g. tell
	// every task where another one listens; it must not change their IDs,
	// agents or resources. It runs on the goroutine that called Offer, and
	// again for a new placement when the first one's offers were stale. When
	// it fails, nothing is launched, Offer returns every offer the gang
	// held, and the gang fails with ErrGangLaunch.
	Prepare func(tasks []protocol.TaskInfo) error
	// Relaunch is how many times a gang that lost a member after it
	// launched is acquired and launched again (negative: without limit).
	// With the default, 0, a gang is done once launched, as the helper
	// leaves its tasks alone from then on. Otherwise the gang watches its
	// members: when one ends other than FINISHED (failed, killed, lost),
	// or the master warns it will preempt or revoke one (a
	// protocol.PreemptionEvent naming it), the whole gang is lost. It
	// kills its other members and acquires and launches all its tasks
	// again, as on its first attempt (Timeout, Attempts and Prepare
	// apply afresh), under new task IDs: "<id>.r<n>" for its n-th
	// relaunch. Once no relaunch is left, a lost gang kills its other
	// members and fails with ErrGangLost.
	Relaunch int
}

// gangState is where a gang is in its life.
type gangState int

const (
	gangIdle gangState = iota
	gangAcquiring
	gangLaunching
	gangWaiting // between attempts
	gangRunning // launched, watching its members (Relaunch)
	gangDone
)

// Gang acquires offers across agents for a set of tasks and launches them
// all at once, once a placement that satisfies every task's resources and
// hard constraints and the gang's group constraints exists.
//
// The scheduler hands the gang the offers it does not want itself (Offer,
// from its Offers callback); the gang keeps those it may use and returns
// the rest. While acquiring, it declares its tasks' shapes as demand with
// an unlimited count, so that every agent they fit on is offered (a finite
// count would have the allocator pack them onto the first agents).
//
// Launching takes one accept per agent (the leader refuses offers on
// different agents in one accept): each is a launch group, all or nothing
// on its agent, but the master commits each agent's group separately.
// When one of them fails, the gang kills the tasks the others launched
// and fails with ErrGangLaunch.
//
// A gang that finds no placement before its deadline declines everything
// it holds, with a short refuse filter so that the offers go to others,
// and fails with ErrGangTimeout, or tries again after a jittered back-off
// when Attempts allows. Releasing on time is what keeps two gangs that
// each hold part of what both need from waiting on each other forever.
//
// A gang with GangSpec.Relaunch keeps all or nothing after its launch
// too: it treats a member that ends other than FINISHED, or that the master
// warns it will preempt, as the loss of the whole gang, and launches all
// its tasks again (gang_relaunch.go).
type Gang struct {
	d      *Driver
	spec   GangSpec
	shapes []protocol.TaskShape
	logger hclog.Logger

	mu       sync.Mutex
	state    gangState
	attempt  int
	deadline time.Time
	held     map[protocol.OfferID]protocol.Offer
	tasks    []protocol.TaskInfo
	err      error
	done     chan struct{}
	resumed  chan struct{} // a launch on stale offers, or a lost gang, went back to acquiring
	// base are the spec's tasks with their own IDs; spec.Tasks are those
	// of the current launch (renamed after a relaunch).
	base []protocol.TaskInfo
	// launches counts the gang's launches; live are the members of the
	// current launch that have not ended (Relaunch only), by task ID.
	launches int
	live     map[protocol.TaskID]protocol.AgentID
}

// NewGang checks spec and prepares a gang on d; Start begins acquiring.
func NewGang(d *Driver, spec GangSpec) (*Gang, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: nil driver", ErrInvalidSpec)
	}
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if spec.Timeout == 0 {
		spec.Timeout = DefaultGangTimeout
	}
	if spec.Attempts == 0 {
		spec.Attempts = 1
	}
	if spec.Refuse == 0 {
		spec.Refuse = DefaultGangRefuse
	}
	if spec.Backoff == (Backoff{}) {
		spec.Backoff = Backoff{Min: 100 * time.Millisecond, Max: max(spec.Timeout, 100*time.Millisecond)}
	}
	spec.Tasks = slices.Clone(spec.Tasks)
	for i := range spec.Tasks {
		spec.Tasks[i].GroupID = spec.GroupID
	}
	spec.Constraints = slices.Clone(spec.Constraints)
	return &Gang{
		d:       d,
		spec:    spec,
		base:    slices.Clone(spec.Tasks),
		shapes:  gangShapes(spec),
		logger:  d.logger.Named("gang").With("group_id", spec.GroupID),
		held:    map[protocol.OfferID]protocol.Offer{},
		done:    make(chan struct{}),
		resumed: make(chan struct{}, 1),
	}, nil
}

func (s GangSpec) validate() error {
	if !protocol.ValidID(s.GroupID) {
		return fmt.Errorf("%w: group id %q", ErrInvalidSpec, s.GroupID)
	}
	if len(s.Tasks) == 0 {
		return fmt.Errorf("%w: gang without tasks", ErrInvalidSpec)
	}
	if s.Timeout < 0 || s.Refuse < 0 || s.Ports < 0 {
		return fmt.Errorf("%w: negative timeout, refuse or ports", ErrInvalidSpec)
	}
	seen := map[protocol.TaskID]bool{}
	for _, t := range s.Tasks {
		if seen[t.TaskID] {
			return fmt.Errorf("%w: task %s twice", ErrInvalidSpec, t.TaskID)
		}
		seen[t.TaskID] = true
		probe := t
		probe.AgentID, probe.GroupID = "agent", s.GroupID
		if err := probe.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
	}
	for _, c := range s.Constraints {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
	}
	return nil
}

// gangShapes are the distinct shapes of the gang's tasks, each with an
// unlimited count.
func gangShapes(spec GangSpec) []protocol.TaskShape {
	common := TaskConstraints(spec.Constraints)
	var out []protocol.TaskShape
	for _, t := range spec.Tasks {
		s := ShapeOf(t, UnlimitedCount)
		s.Ports += spec.Ports
		for _, c := range common {
			if !c.Soft {
				s.Constraints = append(s.Constraints, c)
			}
		}
		if !slices.ContainsFunc(out, func(o protocol.TaskShape) bool { return sameShape(o, s) }) {
			out = append(out, s)
		}
	}
	return out
}

func sameShape(a, b protocol.TaskShape) bool {
	return sameScalars(a.Resources, b.Resources) && a.Ports == b.Ports &&
		slices.EqualFunc(a.Constraints, b.Constraints, func(x, y protocol.Constraint) bool {
			return x.String() == y.String()
		})
}

// Start begins the first attempt: the gang declares its demand and
// accepts offers until its deadline. The driver must be running (after
// Ready); the gang stops when the driver's Run returns.
func (g *Gang) Start(ctx context.Context) error {
	if _, _, err := g.d.session(); err != nil {
		return err
	}
	g.mu.Lock()
	if g.state != gangIdle {
		g.mu.Unlock()
		return fmt.Errorf("%w: gang %s already started", ErrInvalidSpec, g.spec.GroupID)
	}
	g.state = gangAcquiring
	g.attempt = 1
	g.deadline = time.Now().Add(g.hold())
	g.mu.Unlock()
	g.d.mu.Lock()
	g.d.gangs[g] = struct{}{}
	g.d.mu.Unlock()
	g.d.background(g.run)
	g.logger.Debug("gang acquiring", "tasks", len(g.spec.Tasks), "attempt", 1)
	if g.spec.NoDemand {
		return nil
	}
	return g.d.setGangDemand(ctx, g, g.shapes)
}

// hold draws one attempt's holding time from [3/4 Timeout, Timeout].
func (g *Gang) hold() time.Duration {
	t := g.spec.Timeout
	if q := t / 4; q > 0 {
		t -= rand.N(q)
	}
	return t
}

// Offer gives the gang offers the scheduler does not want. The gang keeps
// those it may use and returns the rest, which the scheduler should
// decline or use. When the offers it holds now allow a placement, it
// launches the gang before returning (one accept per agent, using ctx),
// and the returned offers also include those it held and did not use.
// err is the launch's failure (ErrGangLaunch); Done and Err report the
// outcome too. A gang that is not acquiring returns every offer.
func (g *Gang) Offer(ctx context.Context, offers []protocol.Offer) (rest []protocol.Offer, err error) {
	g.mu.Lock()
	if g.state != gangAcquiring {
		g.mu.Unlock()
		return offers, nil
	}
	for _, o := range offers {
		if g.useful(o) {
			g.held[o.ID] = o
		} else {
			rest = append(rest, o)
		}
	}
	p, ok := Place(g.heldLocked(), PlacementSpec{Tasks: g.spec.Tasks, Ports: g.spec.Ports, Constraints: g.spec.Constraints})
	if !ok {
		g.mu.Unlock()
		return rest, nil
	}
	g.state = gangLaunching
	used := map[protocol.OfferID]bool{}
	for _, ap := range p.Agents {
		for _, id := range ap.OfferIDs {
			used[id] = true
		}
	}
	var placed []protocol.Offer
	for _, o := range g.heldLocked() {
		if used[o.ID] {
			placed = append(placed, o)
		} else {
			rest = append(rest, o)
		}
	}
	clear(g.held)
	g.mu.Unlock()
	g.logger.Debug("gang placed", "agents", len(p.Agents))
	if err = g.prepare(&p); err != nil {
		err = fmt.Errorf("%w: %s: prepare: %w", ErrGangLaunch, g.spec.GroupID, err)
		g.finish(ctx, nil, err)
		return append(rest, placed...), err
	}
	if err = g.launch(ctx, p); errors.Is(err, errStaleOffers) {
		g.logger.Debug("gang placement on stale offers; acquiring again", "error", err)
		g.mu.Lock()
		if g.state == gangLaunching {
			g.state = gangAcquiring
		}
		g.mu.Unlock()
		select {
		case g.resumed <- struct{}{}:
		default:
		}
		return rest, nil
	} else if err != nil {
		g.finish(ctx, nil, err)
	} else {
		g.launched(ctx, p.Tasks)
	}
	return rest, err
}

// useful reports whether o's agent may host one of the gang's tasks,
// given what the gang already holds there; g.mu must be held.
func (g *Gang) useful(o protocol.Offer) bool {
	total := o.Resources.Clone()
	for _, h := range g.held {
		if h.AgentID == o.AgentID {
			total.AddInPlace(h.Resources)
		}
	}
	if !GroupAllows(g.spec.Constraints, nil, o.Attributes) {
		return false
	}
	if ok, _ := MatchOffer(o, g.spec.Constraints); !ok {
		return false
	}
	for _, t := range g.spec.Tasks {
		if ok, _ := MatchOffer(o, t.Constraints); !ok || !total.Contains(t.Resources) {
			continue
		}
		left := total.Ranges[protocol.ResPorts].Minus(t.Resources.Ranges[protocol.ResPorts])
		if left.Count() >= uint64(g.spec.Ports) {
			return true
		}
	}
	return false
}

// heldLocked returns the held offers ordered by ID; g.mu must be held.
func (g *Gang) heldLocked() []protocol.Offer {
	out := make([]protocol.Offer, 0, len(g.held))
	for _, o := range g.held {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b protocol.Offer) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// Done is closed when the gang launched or failed; with
// GangSpec.Relaunch, when every member of its last launch has finished, or
// it failed.
func (g *Gang) Done() <-chan struct{} { return g.done }

// Err returns the gang's outcome once Done is closed: nil when it
// launched (with GangSpec.Relaunch: when its members all finished), or an
// error wrapping ErrGangTimeout, ErrGangLaunch, ErrGangCanceled or
// ErrGangLost.
func (g *Gang) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Wait waits until the gang is done or ctx ends, and returns Err.
func (g *Gang) Wait(ctx context.Context) error {
	select {
	case <-g.done:
		return g.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Tasks returns the launched tasks, with their agents and ports, once the
// gang launched: those of its current launch, none while a gang that was
// lost acquires again.
func (g *Gang) Tasks() []protocol.TaskInfo {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.tasks)
}

// Launches returns how many times the gang launched: 1 after its first
// launch, and one more after each relaunch (GangSpec.Relaunch).
func (g *Gang) Launches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.launches
}

// Attempt returns the number of the current (or last) attempt of the
// current acquisition (a relaunch starts again from 1).
func (g *Gang) Attempt() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.attempt
}

// Held returns how many offers the gang holds.
func (g *Gang) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}
