package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// join registers the agent: anew when it has no checkpointed ID,
// otherwise by reregistering with its tasks. It retries while no leader
// answers, until ctx is done.
func (a *Agent) join(ctx context.Context) error {
	if a.ID() == "" {
		return a.register(ctx)
	}
	if err := a.subscribeCommands(ctx, a.ID()); err != nil {
		return err
	}
	return a.reregister(ctx)
}

// register registers the agent anew and checkpoints the ID it is given
// before anything else; then it listens for commands and heartbeats once,
// which opens its resources to offers.
func (a *Agent) register(ctx context.Context) error {
	req := protocol.RegisterRequest{
		Hostname: a.cfg.Hostname, Addresses: a.addresses(), Resources: a.total,
		Attributes: a.attrs, Version: a.cfg.Version,
	}
	var reply protocol.RegisterReply
	if err := a.req.retry(ctx, protocol.MsgRegisterRequest, req, &reply); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if !protocol.ValidID(string(reply.AgentID)) {
		return fmt.Errorf("register: %w: the master assigned agent id %q", protocol.ErrMalformed, reply.AgentID)
	}
	if err := a.ckpt.saveAgent(agentRecord{AgentID: reply.AgentID, Hostname: a.cfg.Hostname, RegisteredAt: time.Now().UnixNano()}); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	a.mu.Lock()
	a.id.store(reply.AgentID)
	a.mu.Unlock()
	if err := a.subscribeCommands(ctx, reply.AgentID); err != nil {
		return err
	}
	a.log.Info("registered", "agent_id", reply.AgentID, "heartbeat", reply.HeartbeatInterval)
	a.sessionUp(reply.HeartbeatInterval)
	if err := a.heartbeatOnce(ctx, reply.AgentID); err != nil {
		a.log.Debug("first heartbeat", "error", err)
		a.pokeSession()
	}
	return nil
}

// heartbeatOnce sends one heartbeat and takes up the interval the leader
// answers with (it grows with the number of agents).
func (a *Agent) heartbeatOnce(ctx context.Context, id protocol.AgentID) error {
	var reply protocol.HeartbeatReply
	if err := a.req.once(ctx, protocol.MsgHeartbeatRequest, protocol.HeartbeatRequest{AgentID: id}, &reply); err != nil {
		return err
	}
	if reply.HeartbeatInterval > 0 {
		a.mu.Lock()
		a.heartbeat = reply.HeartbeatInterval
		a.mu.Unlock()
	}
	return nil
}

// reregister re-attaches the agent with its tasks. Each task is reported
// with the status of its oldest unacknowledged update (or its latest, when
// all are acknowledged), so the master never skips ahead of the updates
// still queued; tasks that ended and whose updates were all acknowledged
// are left out. The rest of the queue is sent again afterwards. When the
// master does not know the agent at all (it was marked gone, or the
// masters lost their state), the agent abandons its tasks and registers
// anew.
func (a *Agent) reregister(ctx context.Context) error {
	a.mu.Lock()
	a.registered = false
	req := protocol.ReregisterRequest{
		AgentID: a.ID(), Hostname: a.cfg.Hostname, Addresses: a.addressesLocked(), Resources: a.total,
		Attributes: a.attrs, Version: a.cfg.Version,
	}
	delivered := map[taskKey]protocol.StatusUUID{}
	a.tasks.mu.Lock()
	seq := a.tasks.records.last() // the request reports the records as of now
	for k, t := range a.tasks.live {
		if t.abandoned || t.rec.Latest == nil {
			continue
		}
		switch {
		case len(t.rec.Queue) > 0:
			req.Tasks = append(req.Tasks, t.rec.Queue[0].Status)
			req.Unacked = append(req.Unacked, t.rec.Queue...)
			delivered[k] = t.rec.Queue[0].UUID
		case !t.rec.State.Terminal():
			req.Tasks = append(req.Tasks, t.rec.Latest.Status)
		}
	}
	a.tasks.mu.Unlock()
	a.mu.Unlock()
	if err := a.waitDurable(ctx, seq); err != nil {
		return fmt.Errorf("reregister: %w", err)
	}
	for i := range req.Tasks {
		req.Tasks[i].AgentID = req.AgentID
	}
	for i := range req.Unacked {
		req.Unacked[i].Status.AgentID = req.AgentID
	}
	if len(req.Unacked) > protocol.MaxListLen {
		req.Unacked = req.Unacked[:protocol.MaxListLen] // resent after anyway
	}
	var reply protocol.RegisterReply
	err := a.req.retry(ctx, protocol.MsgReregisterRequest, req, &reply)
	switch {
	case err == nil:
	case errors.Is(err, protocol.ErrUnknownAgent):
		a.log.Error("the master does not know this agent any more; killing its tasks and registering anew",
			"agent_id", req.AgentID, "error", err)
		if err := a.abandon(ctx); err != nil {
			return err
		}
		return a.register(ctx)
	default:
		return fmt.Errorf("reregister: %w", err)
	}
	a.log.Info("reregistered", "agent_id", req.AgentID, "tasks", len(req.Tasks), "unacked", len(req.Unacked))
	a.delivered(delivered)
	a.sessionUp(reply.HeartbeatInterval)
	return nil
}

// delivered drops from the queues the updates a successful reregistration
// reported as the tasks' statuses. The master committed each of them as
// its task's latest status, already had it, or will never take it (the
// task is terminal or unknown there): sending it again would only make
// the master forward it to the framework a second time.
func (a *Agent) delivered(uuids map[taskKey]protocol.StatusUUID) {
	a.tasks.mu.Lock()
	defer a.tasks.mu.Unlock()
	for k, uuid := range uuids {
		if t, ok := a.tasks.live[k]; ok && dropUpdate(t, uuid) {
			a.tasks.persistLocked(t)
		}
	}
}

// sessionUp records a successful (re)registration and sends every queued
// update again now.
func (a *Agent) sessionUp(heartbeat time.Duration) {
	a.mu.Lock()
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	a.heartbeat = heartbeat
	a.registered, a.rereg = true, false
	a.tasks.resendAll()
	a.mu.Unlock()
	a.kick()
}

// abandon gives up every task after the master forgot the agent: the
// master has already given them up (lost) and may have replaced them, so
// they are killed, and their records and the agent ID are deleted. The
// records go first: records left without an ID are abandoned again at the
// next start, whereas records left behind would be reported under the
// new ID the agent registers with next.
func (a *Agent) abandon(ctx context.Context) error {
	a.mu.Lock()
	sub := a.cmdSub
	a.cmdSub = nil
	a.id.store("")
	a.registered = false
	a.tasks.mu.Lock()
	for k, t := range a.tasks.live {
		t.abandoned = true
		if t.rt != nil {
			if err := t.rt.Kill(); err != nil {
				t.log.Warn("kill abandoned task", "error", err)
			}
		}
		a.tasks.queueLocked(t, removeEntry(t.rec.Name))
		delete(a.tasks.live, k)
	}
	seq := a.tasks.records.last()
	a.tasks.mu.Unlock()
	a.mu.Unlock()
	if sub != nil {
		if err := sub.Unsubscribe(); err != nil {
			a.log.Debug("unsubscribe commands", "error", err)
		}
	}
	if err := a.waitDurable(ctx, seq); err != nil {
		return err
	}
	return a.ckpt.removeAgent()
}

// subscribeCommands listens on the agent's command subject.
func (a *Agent) subscribeCommands(ctx context.Context, id protocol.AgentID) error {
	subject, err := a.subj.AgentCmd(a.cfg.Principal, id)
	if err != nil {
		return err
	}
	if err := a.resubscribe(&a.cmdSub, subject, func(m *nats.Msg) { a.onCommand(ctx, m) }); err != nil {
		return err
	}
	return a.subscribeIngress(ctx, id)
}

// resubscribe listens on subject with h, in place of the subscription in
// *slot (one of the agent's, of an earlier ID), which it ends.
func (a *Agent) resubscribe(slot **nats.Subscription, subject string, h func(*nats.Msg)) error {
	a.mu.Lock()
	nc := a.nc
	a.mu.Unlock()
	sub, err := nc.Subscribe(subject, a.guard(h))
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	a.mu.Lock()
	old := *slot
	*slot = sub
	a.mu.Unlock()
	if old != nil {
		_ = old.Unsubscribe()
	}
	return nil
}

// sessionLoop heartbeats every heartbeat interval, and reregisters when
// the leader does not know the agent.
func (a *Agent) sessionLoop(ctx context.Context) {
	defer a.wg.Done()
	every := a.heartbeatInterval()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.poke:
		}
		a.mu.Lock()
		id, rereg := a.ID(), a.rereg
		a.mu.Unlock()
		if rereg || id == "" {
			if err := a.rejoin(ctx, id); err != nil && ctx.Err() == nil {
				a.log.Error("reregister", "error", err)
			}
		} else {
			err := a.heartbeatOnce(ctx, id)
			switch {
			case err == nil:
			case errors.Is(err, protocol.ErrUnknownAgent):
				a.log.Info("the leader does not know this agent; reregistering")
				a.wantReregister()
			case ctx.Err() != nil:
			case natsclient.Unanswered(err):
				a.log.Debug("heartbeat unanswered", "error", err)
				a.moveOnIfStalled()
			case natsclient.Retryable(err):
				a.log.Debug("heartbeat", "error", err)
			default:
				a.log.Warn("heartbeat refused", "error", err)
			}
		}
		if d := a.heartbeatInterval(); d != every {
			every = d
			tick.Reset(every)
		}
	}
}

// moveOnIfStalled gives up the agent's NATS server if it no longer
// answers: with pings AgentPingInterval apart, the heartbeats are what
// find it first (natsclient.MoveOnIfStalled).
func (a *Agent) moveOnIfStalled() {
	server := a.nc.ConnectedUrlRedacted()
	if moved, err := natsclient.MoveOnIfStalled(a.nc, natsclient.StallCheck); moved {
		a.log.Warn("NATS server does not answer; reconnecting through another", "server", server, "error", err)
	}
}

// rejoin reregisters, or registers anew when a previous attempt abandoned
// the agent's ID midway.
func (a *Agent) rejoin(ctx context.Context, id protocol.AgentID) error {
	if id == "" {
		return a.register(ctx)
	}
	return a.reregister(ctx)
}

func (a *Agent) heartbeatInterval() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.heartbeat <= 0 {
		return DefaultHeartbeat
	}
	return a.heartbeat
}

// wantReregister pauses sending and asks the session loop to reregister.
func (a *Agent) wantReregister() {
	a.mu.Lock()
	a.rereg, a.registered = true, false
	a.mu.Unlock()
	a.pokeSession()
}

// onLeader handles a leader announcement: a new leader (another node or a
// later term) gets the pending updates now rather than at the next resend,
// and a heartbeat, so the agent learns at once if it does not know it.
func (a *Agent) onLeader(m *nats.Msg) {
	var ann protocol.LeaderAnnouncement
	env, err := protocol.Decode(m.Data)
	if err == nil && env.Type != protocol.MsgLeaderAnnouncement {
		err = fmt.Errorf("%w: %s on the leader subject", protocol.ErrInvalidArgument, env.Type)
	}
	if err == nil {
		err = protocol.DecodeBody(env, &ann)
	}
	if err != nil {
		a.log.Warn("malformed leader announcement", "error", err)
		return
	}
	a.mu.Lock()
	a.term = max(a.term, ann.Term)
	if ann.ID == a.leader.ID && ann.Term <= a.leader.Term {
		a.mu.Unlock()
		return
	}
	a.leader = ann
	a.tasks.resendAll()
	a.mu.Unlock()
	a.log.Debug("new leader", "leader", ann.ID, "term", ann.Term)
	a.shuffle.report.leaderChanged()
	a.kick()
	a.pokeSession()
}

// addresses are where the agent can be reached besides NATS.
func (a *Agent) addresses() protocol.Addresses {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addressesLocked()
}

func (a *Agent) addressesLocked() protocol.Addresses {
	return protocol.Addresses{HTTP: a.advertise}
}

// advertised is the file server's advertised address.
func (a *Agent) advertised() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.advertise
}
