package simagent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// Agent is a protocol-level agent that runs tasks in memory. It registers
// with the leader, heartbeats (re-registering with its tasks when the
// leader does not know it), follows LaunchCommand, KillCommand,
// ShutdownFrameworkCommand and AckCommand, and sends every status update
// reliably: batched across tasks, per task in order, each kept until the
// master acknowledges it (an AckCommand, or a successful reply: both mean
// it is in Raft) and resent every ResendInterval until then (a failed or
// unanswered request proves nothing). It records every launch it receives, so
// tests can detect duplicates.
type Agent struct {
	opts   Options
	logger hclog.Logger
	nc     *nats.Conn
	subj   protocol.Subjects
	req    natsclient.Requester

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
	beat   chan struct{}      // a heartbeat now (a new leader), as the real agent's
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
	listed   bool // in Agent.pending
	held     bool // RUNNING, behaviour waiting for Release
	timer    *time.Timer
}

// Start registers a new agent on nc, an already connected NATS connection
// that the agent owns from now on (Close closes it), and starts its loops.
// It returns once the agent is registered, or an error (nc closed). n
// numbers the agent for the default hostname; logger may be nil.
func Start(nc *nats.Conn, subj protocol.Subjects, n int, opts Options, logger hclog.Logger) (*Agent, error) {
	opts.setDefaults(n)
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a := &Agent{
		opts:   opts,
		logger: logger.Named(opts.Hostname),
		nc:     nc,
		subj:   subj,
		held:   opts.Held,
		tasks:  map[TaskKey]*agentTask{},
		wake:   make(chan struct{}, 1),
		beat:   make(chan struct{}, 1),
	}
	a.req = NewRequester(a.nc, opts.RequestTimeout)
	if err := a.listen(); err != nil {
		a.Close()
		return nil, fmt.Errorf("agent %s: %w", opts.Hostname, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.ctx, a.cancel = ctx, cancel
	a.wg.Add(2)
	go a.heartbeatLoop(ctx)
	go a.sendLoop(ctx)
	return a, nil
}

// listen subscribes to the agent's commands and the leader announcements,
// then registers.
func (a *Agent) listen() error {
	// Commands may be published as soon as the registration commits, before
	// the reply tells this agent its ID, so it listens on every agent's
	// subject of its principal from the start and keeps only its own.
	if err := a.subscribe(a.subj.AgentCmdAll(a.opts.Principal), a.onCommand); err != nil {
		return err
	}
	if err := a.subscribe(a.subj.Leader(), a.onLeader); err != nil {
		return err
	}
	if err := a.nc.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return a.register()
}

// subject is the subject of a call on the agent's behalf: its
// credential's, for agent id ("" to register).
func (a *Agent) subject(verb protocol.AgentVerb, id protocol.AgentID) string {
	s, err := a.subj.APIAgent(a.opts.Principal, id, verb)
	if err != nil {
		a.logger.Error("agent subject", "error", err)
		return a.subj.Prefix + ".invalid"
	}
	return s
}

func (a *Agent) subscribe(subject string, h nats.MsgHandler) error {
	sub, err := a.nc.Subscribe(subject, h)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	a.subs = append(a.subs, sub)
	return nil
}

func (a *Agent) register() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.RegisterTimeout)
	defer cancel()
	var reply protocol.RegisterReply
	err := a.req.Retry(ctx, a.subject(protocol.VerbRegister, ""), protocol.MsgRegisterRequest,
		protocol.RegisterRequest{Hostname: a.opts.Hostname, Resources: a.opts.Resources,
			Attributes: a.opts.Attributes, Version: a.opts.Version}, &reply)
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	subject, err := a.subj.AgentCmd(a.opts.Principal, reply.AgentID)
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

// Close stops the agent and closes its NATS connection. Tasks stop with
// it, without status updates.
func (a *Agent) Close() {
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

func (a *Agent) onLeader(msg *nats.Msg) {
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
	// resend tick, and heartbeat now, as a real agent does: the new leader
	// counts the agent's silence from the last heartbeat its predecessor
	// heard.
	a.leaderID = ann.ID
	for _, t := range a.tasks {
		t.lastSent = time.Time{}
	}
	a.kick()
	signal(a.beat)
}

func (a *Agent) kick() { signal(a.wake) }

// signal wakes whoever waits on ch, unless a wake is already pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
