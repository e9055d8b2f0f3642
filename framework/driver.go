package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// Driver connects a Scheduler to the cluster: it subscribes the framework,
// delivers events to the scheduler, keeps the subscription alive across
// leader changes and reconnects, acknowledges status updates, and sends
// the scheduler's calls to the leader. Its methods are safe for
// concurrent use, including from inside Scheduler callbacks.
type Driver struct {
	sched  Scheduler
	cfg    config
	logger hclog.Logger
	subj   protocol.Subjects
	// nonce makes the first subscribe idempotent: a retry after a lost
	// reply gets the framework the first attempt registered.
	nonce string
	// instance tells the master a subscribe sent again by this driver from
	// a takeover by another scheduler; holds is the framework session the
	// driver holds (0 until its first subscribe), sent with every call.
	instance string
	holds    *atomic.Uint64

	ready     chan struct{}
	readyOnce sync.Once
	// stateSem serializes the requests that set the framework's soft state
	// at the leader (demand, suppression) with the subscribe sequence that
	// restores it, so the leader ends up with the driver's latest state.
	stateSem chan struct{}
	queue    eventQueue
	acks     ackQueue

	mu          sync.Mutex
	started     bool
	closing     bool // Run is stopping: no new background work
	stopped     bool
	req         requester
	news        *leaderNews // announcements of new leaders, for retries waiting on one
	runCtx      context.Context
	stop        context.CancelCauseFunc
	wg          sync.WaitGroup
	id          protocol.FrameworkID
	filesToken  string
	subscribed  bool // subscribed with the current leader
	servedBy    string
	servedTerm  uint64
	announced   protocol.LeaderAnnouncement
	heartbeat   time.Duration
	lastBeat    time.Time
	needResub   bool
	leaderMoved bool // the next subscribe follows a leader change
	suppressed  bool
	demand      demandState
	outstanding map[protocol.OfferID]protocol.Offer
	// refusals are the decline filters the driver set, by agent, until
	// they expire: a leader elected since knows none, so a resubscribe
	// sets them again (restore). A Revive clears them, as it does at the
	// master.
	refusals map[protocol.AgentID]time.Time
	// coflows are the coflows registered and not withdrawn, as last
	// registered, re-sent after a leader change (coflows.go).
	coflows   map[string][]protocol.FlowSpec
	unsettled map[protocol.TaskID]protocol.AgentID
	gangs     map[*Gang]struct{}
	seen      uuidWindow
	fatal     error
	tearing   bool // a teardown is under way or done: the master forgetting the framework is expected

	// warned are the preemption warnings in force (preemption.go); it
	// has its own lock.
	warned warnings
}

// errTornDown is the cause that ends Run after a successful Teardown.
var errTornDown = errors.New("framework torn down")

// NewDriver builds a driver for sched. Nothing happens on the network
// until Run.
func NewDriver(sched Scheduler, opts ...Option) (*Driver, error) {
	if sched == nil {
		return nil, fmt.Errorf("%w: nil scheduler", ErrInvalidSpec)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.resolvePrincipal(); err != nil {
		return nil, err
	}
	sub := protocol.SubscribeRequest{Name: cfg.name, Principal: cfg.principal, Role: cfg.role,
		FailoverTimeout: cfg.failoverTimeout, Capabilities: cfg.capabilities, Weight: cfg.weight, User: cfg.user}
	if err := sub.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	d := &Driver{
		nonce:       protocol.NewID("sub"),
		instance:    protocol.NewID("inst"),
		holds:       new(atomic.Uint64),
		news:        newLeaderNews(),
		sched:       sched,
		cfg:         cfg,
		logger:      cfg.logger.Named("framework"),
		subj:        protocol.Subjects{Prefix: cfg.prefix},
		ready:       make(chan struct{}),
		stateSem:    make(chan struct{}, 1),
		id:          cfg.frameworkID,
		suppressed:  cfg.suppressed,
		outstanding: map[protocol.OfferID]protocol.Offer{},
		refusals:    map[protocol.AgentID]time.Time{},
		unsettled:   map[protocol.TaskID]protocol.AgentID{},
		gangs:       map[*Gang]struct{}{},
		seen:        newUUIDWindow(dedupWindow),
	}
	d.queue.init()
	d.acks.init()
	return d, nil
}

// ID returns the framework's ID: empty until the first subscribe, unless
// given with WithFrameworkID.
func (d *Driver) ID() protocol.FrameworkID {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.id
}

// FilesToken returns the token that reads this framework's sandboxes on
// the agents' file servers (GET http://<offer.Addresses.HTTP>/v1/files/...
// with "Authorization: Bearer <token>"), from the last subscribe; empty
// when the master has no files secret configured.
func (d *Driver) FilesToken() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.filesToken
}

// Ready is closed after the first successful subscribe.
func (d *Driver) Ready() <-chan struct{} { return d.ready }

// Offers returns the offers delivered and not yet used, declined or
// rescinded, ordered by ID.
func (d *Driver) Offers() []protocol.Offer {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]protocol.Offer, 0, len(d.outstanding))
	for _, o := range d.outstanding {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b protocol.Offer) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out
}

// session returns what a call needs: the framework ID and the requester,
// or ErrNotRunning before the first subscribe and after Run returned.
func (d *Driver) session() (protocol.FrameworkID, requester, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return "", requester{}, ErrNotRunning
	}
	select {
	case <-d.ready:
	default:
		return "", requester{}, ErrNotRunning
	}
	return d.id, d.req, nil
}

// notStopped returns ErrNotRunning once Run has returned, else nil.
func (d *Driver) notStopped() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return ErrNotRunning
	}
	return nil
}

// background runs f on its own goroutine with Run's context; Run waits
// for it before returning.
func (d *Driver) background(f func(ctx context.Context)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing || d.runCtx == nil || d.runCtx.Err() != nil {
		return
	}
	ctx := d.runCtx
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f(ctx)
	}()
}
