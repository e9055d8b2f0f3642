package testcluster

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// AgentOptions configures a TestAgent.
type AgentOptions struct {
	// Hostname defaults to "agent-<n>".
	Hostname string
	// Resources default to DefaultAgentResources.
	Resources  protocol.Resources
	Attributes protocol.Attributes
	// Behaviour applies to tasks without a LabelBehaviour label (default
	// Finish(50ms)).
	Behaviour Behaviour
	// Held starts the agent holding: tasks reach RUNNING but their
	// behaviour waits for Release.
	Held bool
	// ResendInterval is how long an unacknowledged status update waits
	// before it is sent again (default 100ms).
	ResendInterval time.Duration
	// RequestTimeout bounds one request attempt (default 1s).
	RequestTimeout time.Duration
	// RegisterTimeout bounds registering, retries included (default
	// DefaultWait).
	RegisterTimeout time.Duration
	// DropLaunches makes the agent ignore its first DropLaunches launch
	// commands, as if they were lost on the way.
	DropLaunches int
}

func (o *AgentOptions) setDefaults(n int) {
	if o.Hostname == "" {
		o.Hostname = "agent-" + strconv.Itoa(n)
	}
	if o.Resources.IsEmpty() {
		o.Resources = DefaultAgentResources()
	}
	if o.Behaviour.Kind == "" {
		o.Behaviour = Finish(50 * time.Millisecond)
	}
	if o.ResendInterval == 0 {
		o.ResendInterval = 100 * time.Millisecond
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = time.Second
	}
	if o.RegisterTimeout == 0 {
		o.RegisterTimeout = DefaultWait
	}
}

// TestAgent is a protocol-level agent that runs tasks in memory. It
// registers with the leader, heartbeats (re-registering with its tasks
// when the leader does not know it), follows LaunchCommand, KillCommand,
// ShutdownFrameworkCommand and AckCommand, and sends every status update
// reliably: batched across tasks, per task in order, each kept until the
// master acknowledges it (an AckCommand, or a successful reply: both mean
// it is in Raft) and resent every ResendInterval until then (a failed or
// unanswered request proves nothing). It records every launch it receives, so
// tests can detect duplicates.
type TestAgent struct {
	t      testing.TB
	opts   AgentOptions
	logger hclog.Logger
	nc     *nats.Conn
	subj   protocol.Subjects
	req    requester
	// principal is the agent's credential where the cluster authenticates
	// ("" otherwise).
	principal string

	// cmdMu serializes command handling with the end of registration, so
	// commands that arrived before the agent knew its ID are handled first
	// and in order. It is taken before mu.
	cmdMu    sync.Mutex
	early    []*nats.Msg // commands received before the ID was known
	knowSubj bool

	mu            sync.Mutex
	id            protocol.AgentID
	cmdSubject    string
	heartbeat     time.Duration
	leaderID      string // from the latest leader announcement
	held          bool
	closed        bool
	tasks         map[TaskKey]*agentTask
	order         []TaskKey
	pending       []TaskKey // tasks that may have queued updates
	registrations int
	refused       []RefusedUpdate
	reregister    bool // a reregistration is wanted or under way

	wake   chan struct{}
	ctx    context.Context    // the loops' context
	cancel context.CancelFunc // stops the loops
	wg     sync.WaitGroup
	subs   []*nats.Subscription
}

// agentTask is the agent's record of one task.
type agentTask struct {
	info      protocol.TaskInfo
	key       TaskKey
	behaviour Behaviour
	launches  int
	conflicts int
	state     protocol.TaskState
	// sent are every update created for the task, in order; queue[0] is
	// the oldest one the master has not acknowledged.
	sent     []protocol.StatusUpdate
	acked    []protocol.StatusUUID
	queue    []protocol.StatusUpdate
	inflight bool
	lastSent time.Time
	listed   bool // in TestAgent.pending
	held     bool // RUNNING, behaviour waiting for Release
	timer    *time.Timer
}

// NewAgent starts a test agent and waits until it is registered. It stops
// when the test ends.
func (c *Cluster) NewAgent(opts AgentOptions) *TestAgent {
	c.t.Helper()
	c.mu.Lock()
	n := len(c.agents)
	c.mu.Unlock()
	opts.setDefaults(n)
	principal := c.nextAgentPrincipal()
	a := &TestAgent{
		t:         c.t,
		opts:      opts,
		logger:    c.logger.Named(opts.Hostname),
		nc:        c.ConnectAs(protocol.Identity{Kind: protocol.KindAgent, Name: protocol.PrincipalToken(principal)}),
		principal: principal,
		subj:      c.subj,
		held:      opts.Held,
		tasks:     map[TaskKey]*agentTask{},
		wake:      make(chan struct{}, 1),
	}
	a.req = newRequester(a.nc, opts.RequestTimeout)
	c.mu.Lock()
	c.agents = append(c.agents, a)
	c.mu.Unlock()
	c.t.Cleanup(a.Close)
	// Commands may be published as soon as the registration commits, before
	// the reply tells this agent its ID, so it listens on every agent's
	// subject from the start and keeps only its own.
	a.subscribe(a.subj.AgentCmdAll(a.principal), a.onCommand)
	a.subscribe(a.subj.Leader(), a.onLeader)
	if err := a.nc.Flush(); err != nil {
		fatalf(c.t, "agent %s: flush: %v", opts.Hostname, err)
	}
	if err := a.register(); err != nil {
		fatalf(c.t, "agent %s: %v", opts.Hostname, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.ctx, a.cancel = ctx, cancel
	a.wg.Add(2)
	go a.heartbeatLoop(ctx)
	go a.sendLoop(ctx)
	return a
}

// subject is the subject of a call on the agent's behalf: its
// credential's, for agent id ("" to register).
func (a *TestAgent) subject(verb protocol.AgentVerb, id protocol.AgentID) string {
	s, err := a.subj.APIAgent(a.principal, id, verb)
	if err != nil {
		a.logger.Error("agent subject", "error", err)
		return a.subj.Prefix + ".invalid"
	}
	return s
}

func (a *TestAgent) subscribe(subject string, h nats.MsgHandler) {
	a.t.Helper()
	sub, err := a.nc.Subscribe(subject, h)
	if err != nil {
		fatalf(a.t, "agent %s: subscribe %s: %v", a.opts.Hostname, subject, err)
	}
	a.subs = append(a.subs, sub)
}

func (a *TestAgent) register() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.RegisterTimeout)
	defer cancel()
	var reply protocol.RegisterReply
	err := a.req.Retry(ctx, a.subject(protocol.VerbRegister, ""), protocol.MsgRegisterRequest,
		protocol.RegisterRequest{Hostname: a.opts.Hostname, Resources: a.opts.Resources,
			Attributes: a.opts.Attributes, Version: "testcluster"}, &reply)
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	subject, err := a.subj.AgentCmd(a.principal, reply.AgentID)
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	a.cmdMu.Lock()
	defer a.cmdMu.Unlock()
	a.mu.Lock()
	a.id, a.cmdSubject, a.heartbeat = reply.AgentID, subject, reply.HeartbeatInterval
	a.registrations++
	a.mu.Unlock()
	a.logger.Debug("registered", "agent_id", reply.AgentID, "early_commands", len(a.early))
	a.knowSubj = true
	for _, msg := range a.early {
		if msg.Subject == subject {
			a.handleCommand(msg)
		}
	}
	a.early = nil
	return nil
}

// Close stops the agent. Tasks stop with it, without status updates.
func (a *TestAgent) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	for _, t := range a.tasks {
		if t.timer != nil {
			t.timer.Stop()
		}
	}
	a.mu.Unlock()
	for _, s := range a.subs {
		_ = s.Unsubscribe()
	}
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	a.nc.Close()
}

func (a *TestAgent) onLeader(msg *nats.Msg) {
	var ann protocol.LeaderAnnouncement
	env, err := protocol.Decode(msg.Data)
	if err == nil {
		err = protocol.DecodeBody(env, &ann)
	}
	if err != nil {
		a.logger.Error("bad leader announcement", "error", err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ann.ID == a.leaderID {
		return
	}
	// A new leader: resend pending updates now rather than at the next
	// resend tick.
	a.leaderID = ann.ID
	for _, t := range a.tasks {
		t.lastSent = time.Time{}
	}
	a.kick()
}

func (a *TestAgent) kick() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}
