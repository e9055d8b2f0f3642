package testcluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// FrameworkOptions configures a TestFramework.
type FrameworkOptions struct {
	// Name defaults to "fw-<n>"; it also prefixes auto-launched task IDs.
	Name string
	// Role defaults to "default".
	Role            string
	Weight          float64
	FailoverTimeout time.Duration
	Capabilities    []string
	// Demand is declared right after subscribing and before reviving, so
	// the framework never receives a whole-agent (undeclared) offer first.
	Demand []protocol.TaskShape
	// AutoLaunch, when set, makes the framework launch tasks on every offer
	// it receives; otherwise offers wait for Launch or Decline.
	AutoLaunch *AutoLaunch
	// RequestTimeout bounds one request attempt (default 1s).
	RequestTimeout time.Duration
	// RetryTimeout bounds retries of one request (default DefaultWait).
	RetryTimeout time.Duration
	// Principal is who the framework acts as. Where the cluster
	// authenticates (Options.Credentials, Options.Authenticate) it
	// connects with that principal's secret; the default is then the
	// first of Options.Credentials in name order.
	Principal string
}

// AutoLaunch launches identical tasks on every offer.
type AutoLaunch struct {
	// Resources are one task's resources (scalars only).
	Resources protocol.Resources
	// Behaviour is set on every task as its LabelBehaviour label.
	Behaviour Behaviour
	// Max stops launching once this many launches succeeded (0: no limit);
	// further offers are declined.
	Max int
}

func (o *FrameworkOptions) setDefaults(n int) {
	if o.Name == "" {
		o.Name = "fw-" + strconv.Itoa(n)
	}
	if o.Role == "" {
		o.Role = "default"
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = time.Second
	}
	if o.RetryTimeout == 0 {
		o.RetryTimeout = DefaultWait
	}
}

// TestFramework is a protocol-level framework. It subscribes (retrying
// while no leader answers), listens on its events subject, records offers,
// rescinds and status updates, and acknowledges every status update that
// carries a UUID (retrying while no leader answers).
//
// Every (re-)subscription goes: subscribe suppressed, declare the
// remaining demand, revive; so offers follow the declared demand from the
// first one. It re-subscribes with its framework ID when a new leader
// announces itself (another node, or a later term), and when the leader
// disowns one of its offers or leaves a request unanswered (signs that
// leadership moved unannounced); a re-subscription also reconciles the
// launches whose accept went unanswered.
type TestFramework struct {
	t      testing.TB
	opts   FrameworkOptions
	logger hclog.Logger
	nc     *nats.Conn
	subj   protocol.Subjects
	req    requester
	// principal is who the framework connects and acts as
	// (FrameworkOptions.Principal).
	principal string

	mu            sync.Mutex
	id            protocol.FrameworkID
	closed        bool
	subscriptions int
	subscribedAt  time.Time // when the last subscribe was answered
	leaderID      string
	announced     protocol.LeaderAnnouncement // the latest new leader announced
	outstanding   map[protocol.OfferID]protocol.Offer
	offersSeen    []protocol.Offer
	rescinds      []protocol.RescindEvent
	tasks         map[protocol.TaskID]*fwTask
	order         []protocol.TaskID
	demand        []protocol.TaskShape
	launched      int // auto-launched tasks known to run
	seq           int
	pendingAcks   int // queued or in flight
	ackQueue      []protocol.Acknowledgement
	ackErrors     []error
	errorEvents   []protocol.ErrorEvent
	preemptions   []protocol.PreemptionEvent
	offerQueue    []protocol.Offer

	inbox   chan *nats.Msg // events and leader announcements, in order
	resub   chan struct{}
	wake    chan struct{}
	ackWake chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	subs    []*nats.Subscription
}

// NewFramework subscribes a test framework and declares opts.Demand. It
// stops when the test ends.
func (c *Cluster) NewFramework(opts FrameworkOptions) *TestFramework {
	c.t.Helper()
	c.mu.Lock()
	n := len(c.frameworks)
	c.mu.Unlock()
	opts.setDefaults(n)
	f := &TestFramework{
		t:           c.t,
		opts:        opts,
		logger:      c.logger.Named(opts.Name),
		nc:          c.ConnectAs(protocol.Identity{Kind: protocol.KindFramework, Name: c.frameworkPrincipal(opts.Principal)}),
		principal:   c.frameworkPrincipal(opts.Principal),
		subj:        c.subj,
		outstanding: map[protocol.OfferID]protocol.Offer{},
		tasks:       map[protocol.TaskID]*fwTask{},
		demand:      slices.Clone(opts.Demand),
		inbox:       make(chan *nats.Msg, inboxSize),
		resub:       make(chan struct{}, 1),
		wake:        make(chan struct{}, 1),
		ackWake:     make(chan struct{}, 1),
	}
	f.req = newRequester(f.nc, opts.RequestTimeout)
	c.mu.Lock()
	c.frameworks = append(c.frameworks, f)
	c.mu.Unlock()
	c.t.Cleanup(f.Close)
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	if err := f.subscribe(ctx); err != nil {
		fatalf(c.t, "framework %s: %v", opts.Name, err)
	}
	f.wg.Add(3)
	go f.loop(ctx)
	go f.receive(ctx)
	go f.ackLoop(ctx)
	return f
}

// subject is the subject of a call on the framework's behalf: its
// principal's, for framework id ("" before it has one).
func (f *TestFramework) subject(verb protocol.FrameworkVerb, id protocol.FrameworkID) string {
	s, err := f.subj.APIFramework(f.principal, id, verb)
	if err != nil {
		// Principals and IDs come from the cluster: this is a bug of the
		// test, reported by the request that goes nowhere.
		f.logger.Error("framework subject", "error", err)
		return f.subj.Prefix + ".invalid"
	}
	return s
}

// inboxSize bounds the events and announcements waiting to be handled.
const inboxSize = 1 << 16

// receive handles events and leader announcements in arrival order.
func (f *TestFramework) receive(ctx context.Context) {
	defer f.wg.Done()
	leader := f.subj.Leader()
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-f.inbox:
			if msg.Subject == leader {
				f.onLeader(msg)
			} else {
				f.onEvent(ctx, msg)
			}
		}
	}
}

// resubscribeSoon asks the loop to subscribe again; requests coalesce.
func (f *TestFramework) resubscribeSoon() {
	select {
	case f.resub <- struct{}{}:
	default:
	}
}

// subscribe registers (or re-registers) the framework suppressed, makes
// sure its events subscription exists, declares the remaining demand and
// revives, so offers follow the declared demand from the first one.
func (f *TestFramework) subscribe(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, f.opts.RetryTimeout)
	defer cancel()
	f.mu.Lock()
	id := f.id
	f.mu.Unlock()
	if id == "" {
		// The leader checks that every framework listens on its events
		// subject, and removes one that does not; a new framework can only
		// listen there once the reply tells it its ID. Until then this
		// placeholder answers the check (for every framework; no event can
		// be meant for this one before its next request).
		tmp, err := f.nc.Subscribe(f.subj.FrameworkEventsAll(f.principal), func(*nats.Msg) {})
		if err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		defer func() { _ = tmp.Unsubscribe() }()
		if err := f.nc.Flush(); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	var reply protocol.SubscribeReply
	err := f.req.Retry(rctx, f.subject(protocol.VerbSubscribe, id), protocol.MsgSubscribeRequest,
		protocol.SubscribeRequest{FrameworkID: id, Name: f.opts.Name, Principal: f.principal, Role: f.opts.Role, Weight: f.opts.Weight,
			FailoverTimeout: f.opts.FailoverTimeout, Capabilities: f.opts.Capabilities, Suppressed: true}, &reply)
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if id == "" {
		subject, err := f.subj.FrameworkEvents(f.principal, reply.FrameworkID)
		if err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		// Events and leader announcements share one channel, so they are
		// handled in the order the server delivered them: offers that follow
		// a new leader's announcement are the new leader's.
		sub, err := f.nc.ChanSubscribe(subject, f.inbox)
		if err != nil {
			return fmt.Errorf("subscribe to events: %w", err)
		}
		lsub, err := f.nc.ChanSubscribe(f.subj.Leader(), f.inbox)
		if err != nil {
			return fmt.Errorf("subscribe to leader announcements: %w", err)
		}
		if err := f.nc.Flush(); err != nil {
			return fmt.Errorf("subscribe to events: %w", err)
		}
		f.mu.Lock()
		f.subs = append(f.subs, sub, lsub)
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.id = reply.FrameworkID
	f.leaderID = reply.LeaderID
	if f.announced.ID != reply.LeaderID {
		f.announced = protocol.LeaderAnnouncement{ID: reply.LeaderID}
	}
	f.subscriptions++
	f.subscribedAt = time.Now()
	demand := slices.Clone(f.demand)
	f.mu.Unlock()
	if len(demand) > 0 {
		if err := f.sendDemand(rctx, demand); err != nil {
			return err
		}
	}
	if err := f.req.Retry(rctx, f.subject(protocol.VerbRevive, reply.FrameworkID), protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: reply.FrameworkID}, nil); err != nil {
		return fmt.Errorf("revive: %w", err)
	}
	if id != "" {
		if err := f.reconcileUnsettled(rctx); err != nil {
			return err
		}
	}
	f.logger.Debug("subscribed", "framework_id", reply.FrameworkID, "leader", reply.LeaderID)
	return nil
}

// reconcileUnsettled asks the leader about tasks whose accept went
// unanswered: it reports those it knows, and LOST for the others.
func (f *TestFramework) reconcileUnsettled(ctx context.Context) error {
	f.mu.Lock()
	var tasks []protocol.ReconcileTask
	for _, id := range f.order {
		if t := f.tasks[id]; t.outcome == AcceptUnknown {
			tasks = append(tasks, protocol.ReconcileTask{TaskID: id, AgentID: t.info.AgentID})
		}
	}
	fw := f.id
	f.mu.Unlock()
	if len(tasks) == 0 {
		return nil
	}
	f.logger.Info("reconciling unanswered launches", "tasks", len(tasks))
	err := f.req.Retry(ctx, f.subject(protocol.VerbReconcile, fw), protocol.MsgReconcileRequest,
		protocol.ReconcileRequest{FrameworkID: fw, Tasks: tasks}, nil)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return nil
}

func (f *TestFramework) sendDemand(ctx context.Context, shapes []protocol.TaskShape) error {
	err := f.req.Retry(ctx, f.subject(protocol.VerbDemand, f.ID()), protocol.MsgDemandRequest,
		protocol.DemandRequest{FrameworkID: f.ID(), Demand: shapes}, nil)
	if err != nil {
		return fmt.Errorf("demand: %w", err)
	}
	return nil
}

// Close stops the framework without tearing it down.
func (f *TestFramework) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	subs := f.subs
	f.mu.Unlock()
	for _, s := range subs {
		_ = s.Unsubscribe()
	}
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	f.nc.Close()
}

// ID is the framework ID the master assigned.
func (f *TestFramework) ID() protocol.FrameworkID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id
}

// Name is the framework's name.
func (f *TestFramework) Name() string { return f.opts.Name }

// Role is the framework's role.
func (f *TestFramework) Role() string { return f.opts.Role }

// Subscriptions counts successful subscribes, re-subscribes included.
func (f *TestFramework) Subscriptions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subscriptions
}

// SubscribedAt is when the last subscribe, or re-subscribe, was answered.
func (f *TestFramework) SubscribedAt() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subscribedAt
}

// LeaderID is the leader that answered the last subscribe.
func (f *TestFramework) LeaderID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leaderID
}

// loop re-subscribes after leader announcements and launches on offers.
func (f *TestFramework) loop(ctx context.Context) {
	defer f.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.resub:
			if err := f.subscribe(ctx); err != nil && ctx.Err() == nil {
				f.logger.Error("re-subscribe", "error", err)
			}
		case <-f.wake:
			f.autoLaunch(ctx)
		}
	}
}

func (f *TestFramework) onLeader(msg *nats.Msg) {
	var ann protocol.LeaderAnnouncement
	env, err := protocol.Decode(msg.Data)
	if err == nil {
		err = protocol.DecodeBody(env, &ann)
	}
	if err != nil {
		f.logger.Error("bad leader announcement", "error", err)
		return
	}
	// Leaders announce themselves periodically; only a new one (another
	// node, or a later term) needs the framework to subscribe again. Offers
	// of the earlier leader died with it. The subscribe reply names the
	// leader but not its term: the first announcement of that leader gives
	// the term, as the SDK's driver does, rather than a resubscribe.
	f.mu.Lock()
	same := ann.ID == f.announced.ID && (f.announced.Term == 0 || ann.Term <= f.announced.Term)
	if same && f.announced.Term == 0 {
		f.announced.Term = ann.Term
	}
	if !same {
		f.announced = ann
		clear(f.outstanding)
	}
	f.mu.Unlock()
	if same {
		return
	}
	f.logger.Debug("new leader announced", "leader", ann.ID, "term", ann.Term)
	f.resubscribeSoon()
}

func (f *TestFramework) onEvent(ctx context.Context, msg *nats.Msg) {
	env, err := protocol.Decode(msg.Data)
	if err != nil {
		f.logger.Error("bad event", "error", err)
		return
	}
	body, _ := protocol.NewBody(env.Type)
	if err := protocol.DecodeBody(env, body); err != nil {
		f.logger.Error("bad event body", "type", env.Type.String(), "error", err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ev := body.(type) {
	case *protocol.OffersEvent:
		for _, o := range ev.Offers {
			f.logger.Trace("offer", "offer_id", o.ID, "agent_id", o.AgentID, "cpus", o.Resources.Scalar(protocol.ResCPUs))
			f.outstanding[o.ID] = o
			f.offersSeen = append(f.offersSeen, o)
		}
		if f.opts.AutoLaunch != nil {
			f.offerQueue = append(f.offerQueue, ev.Offers...)
			select {
			case f.wake <- struct{}{}:
			default:
			}
		}
	case *protocol.RescindEvent:
		delete(f.outstanding, ev.OfferID)
		f.rescinds = append(f.rescinds, *ev)
	case *protocol.StatusUpdateEvent:
		f.statusLocked(ctx, ev)
	case *protocol.ErrorEvent:
		f.errorEvents = append(f.errorEvents, *ev)
	case *protocol.PreemptionEvent:
		f.preemptions = append(f.preemptions, *ev)
	}
}

// statusLocked records a status update and acknowledges it.
func (f *TestFramework) statusLocked(ctx context.Context, ev *protocol.StatusUpdateEvent) {
	st := ev.Status
	if st.UUID == "" {
		st.UUID = ev.UUID
	}
	t, ok := f.tasks[st.TaskID]
	if !ok {
		t = &fwTask{info: protocol.TaskInfo{TaskID: st.TaskID, AgentID: st.AgentID}, outcome: AcceptUnknown}
		f.tasks[st.TaskID] = t
		f.order = append(f.order, st.TaskID)
	}
	if t.outcome == AcceptUnknown {
		if st.State == protocol.TaskLost && (st.Reason == protocol.ReasonReconciliation || st.Reason == protocol.ReasonTaskUnknown) {
			// Reconciliation: the leader never committed the launch.
			t.outcome = AcceptRefused
		} else if st.UUID == "" && (st.State == protocol.TaskError || st.Reason == protocol.ReasonInvalidOffers) {
			// The leader refused the accept (it sends TASK_ERROR, or
			// TASK_DROPPED or TASK_LOST for stale offers, with no update
			// UUID, besides the error reply).
			t.outcome = AcceptRefused
		} else {
			// An unanswered accept did commit after all.
			t.outcome = AcceptOK
			f.countLaunchLocked(t.info)
		}
	}
	t.statuses = append(t.statuses, st)
	if ev.UUID == "" || f.closed {
		return
	}
	f.pendingAcks++
	f.ackQueue = append(f.ackQueue, protocol.Acknowledgement{AgentID: st.AgentID, TaskID: st.TaskID, UUID: ev.UUID})
	select {
	case f.ackWake <- struct{}{}:
	default:
	}
}
