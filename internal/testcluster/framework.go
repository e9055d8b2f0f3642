package testcluster

import (
	"context"
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
