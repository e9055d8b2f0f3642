package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

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
