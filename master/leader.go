package master

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/coflowbook"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// leader is the soft state and services of the master while it leads:
// the allocator (rebuilt from the replicated state after every election),
// agents' last heartbeats, and the API subscription. Everything in it is
// dropped when leadership is lost.
type leader struct {
	leaderDeps
	logger hclog.Logger
	subj   protocol.Subjects
	// ctx ends when this leader stops: what it started (Raft applies,
	// requests it serves) stops waiting then.
	ctx    context.Context
	cancel context.CancelFunc
	// term is the Raft term this leader was elected in; every agent
	// command carries it (protocol.TermHeader).
	term uint64

	// mu guards the allocator and lastSeen. It is held only for allocator
	// calls, never across Raft applies or NATS I/O.
	mu      sync.Mutex
	alloc   *offers.Allocator
	limiter *principalLimiter // nil: no framework rate limit
	// agentLimiter limits agent calls per credential (nil: no limit).
	agentLimiter *principalLimiter
	lastSeen     map[protocol.AgentID]time.Time
	// since is when this leader took over: it marks no agent unreachable
	// before silentAfter from then (agent_timeout.go).
	since time.Time
	// longestPace is the longest heartbeat interval asked of agents
	// this term (heartbeat_pace.go).
	longestPace time.Duration
	// credentials counts the agents each credential holds (agent_cap.go).
	credentials credentialAgents
	// removalHeld is set while checkAgents holds removals back
	// (Config.AgentRemovalLimit); only the agent check loop uses it.
	removalHeld bool
	// opening holds frameworks that subscribed but have not sent another
	// request yet: they learn their ID from the subscribe reply and only
	// then open their event stream, so offers wait for their next request.
	opening map[protocol.FrameworkID]bool
	// subscribedAt gives frameworks a grace period after subscribing before
	// the disconnect check looks at them.
	subscribedAt map[protocol.FrameworkID]time.Time
	// joining holds agents that registered but have not heartbeated yet:
	// they learn their ID from the register reply and only then listen for
	// commands, so their resources are offered from their first heartbeat.
	joining map[protocol.AgentID]offers.AgentInfo
	// shares is guarded by mu.
	shares shareUpdates
	// coflows is the shuffles' schedule (its own lock); the timer asks it
	// again when its slot rotation moves on.
	coflows       *coflowbook.Book
	coflowTimerMu sync.Mutex
	coflowTimer   *time.Timer

	// preemption is the preemption memory (preempt.go), guarded by mu;
	// preemptNow asks for a decision at once (a deadline passed).
	preemption preemptions
	preemptNow chan struct{}

	// retries is the status updates' retry memory (status_retry.go).
	retries statusRetries
	// launchRetries is the unanswered launches' retry memory
	// (launch_retry.go); retrying guards it too.
	launchRetries launchRetries
	// drains remembers drain-deadline kills and drains reported done
	// (drain_deadline.go; its own lock).
	drains *drainWatch

	// subs are the API subscriptions, one per lane: frameworks' calls
	// and agents' have a subscription and a pool of handlers each
	// (work, agentWork), so that a flood of heartbeats and status updates
	// never queues a framework's call behind it.
	subs      []*nats.Subscription
	agentWork chan struct{}
	checking  atomic.Bool   // a framework check is running
	retrying  atomic.Bool   // a status retry scan is running
	planning  atomic.Bool   // a preemption decision is running
	marking   atomic.Bool   // agents' silence is being recorded
	work      chan struct{} // bounds concurrent request handlers
	trigger   chan struct{}
	done      chan struct{}
	wg        sync.WaitGroup
	// stopping, set under stopMu before stop waits, keeps request
	// handlers from joining wg while it is waited on.
	stopMu   sync.RWMutex
	stopping bool
}

// maxConcurrentRequests bounds the request handlers running at once; Raft
// group commit batches their applies.
const maxConcurrentRequests = 256

func newLeader(m *Master, v *state.View) (*leader, error) {
	cfg := offers.DefaultConfig()
	cfg.Policy = offers.Policy(m.cfg.Policy)
	cfg.LeftoverOrder = offers.LeftoverOrder(m.cfg.LeftoverOrder)
	cfg.Placement, _ = offers.ParsePlacement(m.cfg.Placement)
	cfg.OfferTimeout = m.cfg.OfferTimeout
	cfg.DefaultRefuse = m.cfg.DefaultRefuse
	cfg.Preemption = m.cfg.Preemption.allocator()
	// Offer IDs must never repeat across leaders.
	cfg.OfferIDPrefix = protocol.NewID("of")
	alloc, err := offers.New(cfg)
	if err != nil {
		return nil, err
	}
	term := m.node.Term()
	cb, err := coflowbook.New(m.cfg.CoflowScheduler, term)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &leader{
		ctx:          ctx,
		cancel:       cancel,
		term:         term,
		coflows:      cb,
		leaderDeps:   depsOf(m),
		logger:       m.logger.Named("leader"),
		subj:         m.cfg.subjects(),
		alloc:        alloc,
		lastSeen:     map[protocol.AgentID]time.Time{},
		credentials:  newCredentialAgents(),
		opening:      map[protocol.FrameworkID]bool{},
		subscribedAt: map[protocol.FrameworkID]time.Time{},
		shares:       shareUpdates{sent: map[protocol.FrameworkID]protocol.Resources{}},
		joining:      map[protocol.AgentID]offers.AgentInfo{},
		retries:      statusRetries{first: m.cfg.statusRetryInterval()},
		drains:       newDrainWatch(),
		work:         make(chan struct{}, maxConcurrentRequests),
		agentWork:    make(chan struct{}, maxConcurrentRequests),
		trigger:      make(chan struct{}, 1),
		preemptNow:   make(chan struct{}, 1),
		done:         make(chan struct{}),
	}
	if m.cfg.FrameworkRateLimit.QPS > 0 {
		l.limiter = newPrincipalLimiter(m.cfg.FrameworkRateLimit)
	}
	if m.cfg.AgentRateLimit.QPS > 0 {
		l.agentLimiter = newPrincipalLimiter(m.cfg.AgentRateLimit)
	}
	if err := l.rebuild(v, time.Now()); err != nil {
		return nil, err
	}
	return l, nil
}

// rebuild loads the allocator from the replicated state: roles, active
// agents (each given a full heartbeat timeout to check in, counted from
// now or from when a predecessor recorded it had gone silent, and at least
// silentAfter from now: checkAgents),
// frameworks and the resources of every task that still holds them.
func (l *leader) rebuild(v *state.View, now time.Time) error {
	l.since = now
	for path, w := range l.cfg.Roles {
		if err := l.alloc.SetRole(path, w); err != nil {
			return fmt.Errorf("role %s: %w", path, err)
		}
	}
	for _, r := range v.Roles() {
		if err := l.configureRole(*r); err != nil {
			return fmt.Errorf("role %s: %w", r.Path, err)
		}
	}
	for _, a := range v.Agents() {
		if a.State != state.AgentActive && a.State != state.AgentDraining {
			continue
		}
		if err := l.addAgentLocked(offers.AgentInfo{ID: a.ID, Hostname: a.Hostname, Total: a.Resources, Attributes: a.Attributes}); err != nil {
			return fmt.Errorf("agent %s: %w", a.ID, err)
		}
		l.lastSeen[a.ID] = seenAt(a, now)
		l.credentials.add(a.Principal, a.ID)
	}
	for _, f := range v.Frameworks() {
		if err := l.alloc.AddFramework(offers.FrameworkInfo{ID: f.ID, Role: f.Role, Weight: f.Weight,
			Suppressed: f.Suppressed, NoRevocable: f.HasCapability(protocol.CapNoRevocable)}); err != nil {
			return fmt.Errorf("framework %s: %w", f.ID, err)
		}
	}
	for _, t := range v.Tasks() {
		if t.Terminal() || l.lastSeen[t.AgentID].IsZero() {
			continue
		}
		if err := l.alloc.AddUsage(t.FrameworkID, t.AgentID, t.Info.Resources); err != nil {
			l.logger.Warn("task resources do not fit its agent", "framework_id", t.FrameworkID,
				"task_id", t.ID, "agent_id", t.AgentID, "error", err)
		}
	}
	return nil
}

func (l *leader) start() error {
	for kind, work := range map[protocol.IdentityKind]chan struct{}{protocol.KindFramework: l.work, protocol.KindAgent: l.agentWork} {
		sub, err := l.nc.Subscribe(l.subj.APIKind(kind), func(msg *nats.Msg) { l.dispatch(work, msg) })
		if err != nil {
			l.unsubscribe()
			return fmt.Errorf("subscribe to the API: %w", err)
		}
		l.subs = append(l.subs, sub)
	}
	if err := l.nc.Flush(); err != nil {
		return fmt.Errorf("subscribe to the API: %w", err)
	}
	l.announce()
	l.resendStagingLaunches()
	l.resendFrameworkShutdowns()
	l.wg.Add(1)
	go l.loop()
	return nil
}

// unsubscribe ends the API subscriptions.
func (l *leader) unsubscribe() {
	for _, sub := range l.subs {
		if err := sub.Unsubscribe(); err != nil {
			l.logger.Debug("unsubscribe", "error", err)
		}
	}
	l.subs = nil
}

func (l *leader) stop() {
	l.unsubscribe()
	l.stopMu.Lock()
	l.stopping = true
	l.stopMu.Unlock()
	close(l.done)
	l.cancel()
	l.stopCoflowTimer()
	l.wg.Wait()
}

// timed is the context of one thing the leader does on its own (a Raft
// apply, a check): it ends after the request timeout or when this leader
// stops.
func (l *leader) timed() (context.Context, context.CancelFunc) {
	return context.WithTimeout(l.ctx, l.cfg.RequestTimeout)
}

// requestContext is the context an HTTP request is served in on this
// leader: it ends after the request timeout, with the request, or when
// this leader stops, so that nothing a deposed leader took on goes on
// waiting for Raft.
func (l *leader) requestContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, l.cfg.RequestTimeout)
	stop := context.AfterFunc(l.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// announce tells everyone on the leader subject who leads now.
func (l *leader) announce() {
	msg := protocol.LeaderAnnouncement{ID: l.id, Term: l.term, HTTPAddr: l.httpAddr(), NATSURLs: []string{l.natsURL}}
	l.publish(l.subj.Leader(), protocol.MsgLeaderAnnouncement, msg)
}

// loop runs allocation rounds (every AllocationInterval, or sooner when
// triggered), the agent heartbeat timeout and the drains' deadlines.
func (l *leader) loop() {
	defer l.wg.Done()
	alloc := time.NewTicker(l.cfg.AllocationInterval)
	defer alloc.Stop()
	health := time.NewTicker(l.cfg.AgentHeartbeat)
	defer health.Stop()
	agentDue := time.NewTimer(l.cfg.AgentTimeout)
	defer agentDue.Stop()
	coflowRefresh := time.NewTicker(coflowbook.Repeat)
	defer coflowRefresh.Stop()
	retry := time.NewTicker(statusRetryScan(l.retries.first))
	defer retry.Stop()
	preempt := time.NewTicker(l.cfg.Preemption.Interval)
	defer preempt.Stop()
	announced := time.Now() // start announced
	pacer := roundPacer{maxGap: roundGapFactor * l.cfg.AllocationInterval}
	var deferred <-chan time.Time // a round waiting out roundGap
	round := func(now time.Time) {
		l.allocate(now)
		pacer.ran(now, time.Now())
	}
	ask := func(now time.Time) {
		run, wait := pacer.ask(now)
		switch {
		case run:
			round(now)
		case wait > 0:
			deferred = time.After(wait)
		}
	}
	for {
		select {
		case <-l.done:
			return
		case <-alloc.C:
			ask(time.Now())
		case <-l.trigger:
			ask(time.Now())
		case now := <-deferred:
			deferred = nil
			round(now)
		case now := <-agentDue.C:
			agentDue.Reset(l.checkAgents(now))
		case now := <-health.C:
			agentDue.Reset(l.checkAgents(now))
			l.runAlone(&l.marking, func() { l.markSilence(now) })
			l.checkDrains(now)
			l.runAlone(&l.checking, func() { l.checkFrameworks(now) })
			if announceDue(announced, now, l.pace(), l.cfg.AgentHeartbeat) {
				l.announce() // periodic, as protocol.LeaderAnnouncement promises
				announced = now
			}
		case <-coflowRefresh.C:
			l.sendCoflowPriorities(l.coflows.Current())
		case now := <-retry.C:
			l.runAlone(&l.retrying, func() {
				l.retryStatuses(now)
				l.retryLaunches(now)
			})
		case now := <-preempt.C:
			l.runAlone(&l.planning, func() { l.preempt(now) })
		case <-l.preemptNow:
			if !l.runAlone(&l.planning, func() { l.preempt(time.Now()) }) {
				// A deadline or a delay ended during a decision: decide
				// again just after it.
				time.AfterFunc(10*time.Millisecond, l.wakePreempt)
			}
		}
	}
}

// runAlone runs f on its own goroutine unless the previous run that
// running guards has not ended: a slow check is skipped, not queued.
func (l *leader) runAlone(running *atomic.Bool, f func()) bool {
	if !running.CompareAndSwap(false, true) {
		return false
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer running.Store(false)
		f()
	}()
	return true
}

// kick asks for an allocation round soon; kicks coalesce.
func (l *leader) kick() {
	select {
	case l.trigger <- struct{}{}:
	default:
	}
}

// publish encodes and sends one message; failures are logged, since the
// receivers recover through retries and reconciliation.
func (l *leader) publish(subject string, t protocol.MsgType, body any) {
	data, err := protocol.Encode(t, body)
	if err != nil {
		l.logger.Error("encode message", "type", t.String(), "error", err)
		return
	}
	if err := l.nc.Publish(subject, data); err != nil {
		l.logger.Warn("publish", "subject", subject, "error", err)
	}
}

// apply commits one command through Raft and returns its result.
func (l *leader) apply(ctx context.Context, t state.CmdType, body any) (any, error) {
	defer l.metrics.applied(time.Now())
	cmd, err := state.Encode(t, body)
	if err != nil {
		return nil, err
	}
	res, err := l.node.Apply(ctx, cmd)
	if err != nil {
		return nil, raftError(err)
	}
	r, ok := res.(applyResult)
	if !ok {
		return nil, fmt.Errorf("%w: unexpected apply result %T", protocol.ErrInternal, res)
	}
	return r.Value, r.Err
}
