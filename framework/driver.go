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
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
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

// Run connects, subscribes the framework and delivers events to the
// scheduler until ctx ends or the framework is torn down; it then returns
// nil. It returns an error when the framework cannot go on: the master no
// longer knows it (protocol.ErrUnknownFramework, after its failover
// timeout), it was refused at subscribe (protocol.ErrUnauthorized, ...),
// or the NATS connection was closed. A driver runs once; calling Run again
// returns ErrClosed.
func (d *Driver) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.started {
		d.mu.Unlock()
		return ErrClosed
	}
	d.started = true
	d.mu.Unlock()

	nc, owned, err := d.connect()
	if err != nil {
		d.finish()
		return err
	}
	runCtx, stop := context.WithCancelCause(ctx)
	status := nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING, nats.CONNECTED, nats.CLOSED)
	inbox := make(chan *nats.Msg, inboxSize)
	d.mu.Lock()
	d.runCtx, d.stop = runCtx, stop
	d.req = requester{nc: nc, subj: d.subj, timeout: d.cfg.requestTimeout, session: d.holds, principal: d.cfg.principal}
	d.mu.Unlock()

	subs, err := d.listen(nc, inbox)
	if err == nil {
		d.wg.Add(4)
		go d.pump(runCtx, inbox)
		go d.watchStatus(runCtx, status)
		go d.watchdog(runCtx)
		go d.ackLoop(runCtx)
		err = d.loop(runCtx, nc, inbox, &subs)
	}
	err = refusedCredential(nc, err)
	stop(err)
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	cause := context.Cause(runCtx)
	nc.RemoveStatusListener(status)
	for _, s := range subs {
		if uerr := s.Unsubscribe(); uerr != nil && !errors.Is(uerr, nats.ErrConnectionClosed) {
			d.logger.Debug("unsubscribe", "subject", s.Subject, "error", uerr)
		}
	}
	d.wg.Wait()
	if owned {
		nc.Close()
	}
	d.finish()
	d.mu.Lock()
	fatal := refusedCredential(nc, d.fatal)
	d.mu.Unlock()
	switch {
	case fatal != nil:
		d.sched.Error(d, fatal)
		return fatal
	case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errTornDown):
		d.sched.Error(d, err)
		return err
	case errors.Is(cause, errTornDown):
		d.logger.Info("framework torn down")
	}
	return nil
}

// inboxSize bounds the messages the NATS client holds for the driver
// before the pump moves them into the unbounded event queue.
const inboxSize = 1 << 16

// connect returns the NATS connection to use and whether the driver owns
// it.
func (d *Driver) connect() (*nats.Conn, bool, error) {
	return dialNATS(d.cfg, d.subj, d.logger, d.fail)
}

// dialNATS returns the connection cfg names, or a new one made with its
// URLs and credentials, and whether the caller owns it. onRefused is told
// when the cluster refuses a subject: the connection was given a
// principal its credential is not.
func dialNATS(cfg config, subj protocol.Subjects, logger hclog.Logger, onRefused func(error)) (*nats.Conn, bool, error) {
	if cfg.nc != nil {
		if cfg.nc.IsClosed() {
			return nil, false, fmt.Errorf("%w: the NATS connection is closed", ErrClosed)
		}
		return cfg.nc, false, nil
	}
	urls := cfg.urls
	if len(urls) == 0 {
		urls = []string{nats.DefaultURL}
	}
	opts := append(natsclient.Options(),
		nats.Name(cfg.name),
		nats.RetryOnFailedConnect(true),
		// Replies come on the principal's own inbox subjects, the only
		// ones its connection may read where connections are authenticated.
		nats.CustomInboxPrefix(subj.Inbox(protocol.KindFramework, cfg.principal)),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			logger.Warn("nats error", "subject", subject, "error", err)
			if errors.Is(err, nats.ErrPermissionViolation) {
				onRefused(fmt.Errorf("%w: the cluster refused a subject of principal %q: %v", protocol.ErrUnauthorized,
					protocol.PrincipalToken(cfg.principal), err))
			}
		}),
	)
	if cfg.natsCA != "" {
		opts = append(opts, nats.RootCAs(cfg.natsCA))
	}
	if cfg.natsCert != "" {
		opts = append(opts, nats.ClientCert(cfg.natsCert, cfg.natsKey))
	}
	if cfg.natsCA != "" || cfg.natsCert != "" {
		opts = append(opts, nats.Secure())
	}
	if cfg.secret != "" {
		user := protocol.Identity{Kind: protocol.KindFramework, Name: cfg.principal}.String()
		opts = append(opts, nats.UserInfo(user, cfg.secret))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), opts...)
	if err != nil {
		return nil, false, fmt.Errorf("connect to NATS: %w", err)
	}
	return nc, true, nil
}

// listen subscribes to leader announcements and, when the framework ID is
// known, to the framework's events. Both feed one channel, so the driver
// sees them in the order the server delivered them: offers that follow a
// new leader's announcement are the new leader's.
func (d *Driver) listen(nc *nats.Conn, inbox chan *nats.Msg) ([]*nats.Subscription, error) {
	lsub, err := nc.ChanSubscribe(d.subj.Leader(), inbox)
	if err != nil {
		return nil, fmt.Errorf("subscribe to leader announcements: %w", err)
	}
	subs := []*nats.Subscription{lsub}
	if id := d.ID(); id != "" {
		esub, err := d.listenEvents(nc, id, inbox)
		if err != nil {
			return subs, err
		}
		subs = append(subs, esub)
	}
	return subs, nil
}

func (d *Driver) listenEvents(nc *nats.Conn, id protocol.FrameworkID, inbox chan *nats.Msg) (*nats.Subscription, error) {
	subject, err := d.subj.FrameworkEvents(d.cfg.principal, id)
	if err != nil {
		return nil, err
	}
	sub, err := nc.ChanSubscribe(subject, inbox)
	if err != nil {
		return nil, fmt.Errorf("subscribe to events: %w", err)
	}
	if err := nc.Flush(); err != nil && !errors.Is(err, nats.ErrConnectionReconnecting) {
		d.logger.Debug("flush after subscribing to events", "error", err)
	}
	return sub, nil
}

// fail ends Run with err, which Run reports through Scheduler.Error and
// returns. The first failure wins.
func (d *Driver) fail(err error) {
	d.mu.Lock()
	if d.fatal == nil {
		d.fatal = err
	}
	stop := d.stop
	d.mu.Unlock()
	d.logger.Error("framework driver stopping", "error", err)
	if stop != nil {
		stop(err)
	}
}

// checkFatal ends Run when err shows the master no longer knows the
// framework; it returns err.
func (d *Driver) checkFatal(err error) error {
	if !isGone(err) {
		return err
	}
	d.mu.Lock()
	tearing := d.tearing
	d.mu.Unlock()
	if !tearing {
		d.fail(err)
	}
	return err
}

// finish marks the driver stopped and fails waiting acknowledgements.
func (d *Driver) finish() {
	d.mu.Lock()
	d.stopped = true
	d.subscribed = false
	d.mu.Unlock()
	d.acks.close(ErrNotRunning)
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
