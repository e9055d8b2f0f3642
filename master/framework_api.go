package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// subscribe registers a new framework, or takes back an existing one that
// subscribes again with its ID (after a reconnect or a master failover):
// it is connected again, and every status update it has not acknowledged
// is sent again.
func (l *leader) subscribe(ctx context.Context, r *protocol.SubscribeRequest) (*protocol.SubscribeReply, error) {
	if err := l.authorizeRole(r); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	id, resubscribe := r.FrameworkID, r.FrameworkID != ""
	var before uint64
	if resubscribe {
		old, ok := l.m.View().Framework(id)
		if !ok {
			return nil, fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, id)
		}
		before = old.Session
	} else {
		id = protocol.NewFrameworkID()
	}
	// The grace period starts before the commit: a disconnect check that
	// reads the committed framework must find it too, or it would take a
	// framework that has not opened its event stream yet for gone.
	l.mu.Lock()
	l.subscribedAt[id] = time.Unix(0, now)
	l.mu.Unlock()
	res, err := l.apply(ctx, state.CmdRegisterFramework, state.RegisterFramework{
		ID: id, Name: r.Name, Principal: r.Principal, Role: r.Role, Weight: r.Weight,
		FailoverTimeout: r.FailoverTimeout, Capabilities: r.Capabilities, Suppressed: r.Suppressed,
		Resubscribe: resubscribe, Nonce: r.Nonce, Session: r.Session, Instance: r.Instance, User: r.User, Time: now,
	})
	if err != nil {
		return nil, err
	}
	f, _ := res.(*state.Framework)
	if f == nil {
		return nil, fmt.Errorf("%w: register framework returned %T", protocol.ErrInternal, res)
	}
	if f.ID != id {
		// A new registration sent again (same nonce): the framework the
		// first one registered, subscribing again.
		l.mu.Lock()
		delete(l.subscribedAt, id)
		l.mu.Unlock()
		id, resubscribe = f.ID, true
	}
	if resubscribe && before != 0 && f.Session != before {
		// The scheduler that held the framework learns it was taken over
		// from the first event of the new session it sees: the next
		// heartbeat at the latest.
		l.logger.Info("framework taken over by another scheduler", "framework_id", id,
			"session", f.Session, "previous_session", before)
	}
	// RegisterFramework leaves the framework connected, so a resubscription
	// also ends a disconnect and its failover timer.
	l.mu.Lock()
	if _, missing := l.alloc.Usage(id); missing != nil {
		err = l.alloc.AddFramework(offers.FrameworkInfo{ID: id, Role: r.Role, Weight: r.Weight, Suppressed: true})
	} else if err = l.alloc.Suppress(id); err == nil {
		// A scheduler subscribing again may name another role or weight:
		// the allocator follows what was just replicated.
		err = l.alloc.MoveFramework(id, f.Role, f.Weight)
	}
	if err == nil {
		err = l.alloc.SetNoRevocable(id, f.HasCapability(protocol.CapNoRevocable))
	}
	var rescinds []offers.Rescind
	if resubscribe {
		// A framework subscribing again has forgotten the offers it held.
		var held []protocol.OfferID
		for _, o := range l.alloc.Outstanding() {
			if o.FrameworkID == id {
				held = append(held, o.ID)
			}
		}
		rescinds = l.alloc.Rescind(held, "framework subscribed again")
	}
	l.opening[id] = !r.Suppressed
	l.subscribedAt[id] = time.Unix(0, now)
	l.shares.forget(id)
	l.mu.Unlock()
	l.sendRescinds(rescinds)
	if err != nil {
		return nil, err
	}
	l.logger.Info("framework subscribed", "framework_id", id, "role", r.Role, "resubscribe", resubscribe)
	l.frameworkEvent(id, "subscribed")
	l.resendUnacked(id)
	reply := &protocol.SubscribeReply{FrameworkID: id, LeaderID: l.m.ID(), HeartbeatInterval: l.m.cfg.AgentHeartbeat,
		Session: f.Session}
	reply.FilesToken = l.m.cfg.filesToken(id, time.Now())
	return reply, nil
}

// resendUnacked sends a framework, for every task, the oldest status update
// it has not acknowledged yet, so updates survive master failovers and
// reconnects.
func (l *leader) resendUnacked(id protocol.FrameworkID) {
	for _, t := range l.m.View().UnackedTasks(id) {
		if st, ok := t.Pending(); ok {
			l.publishStatus(st)
		}
	}
}

// sendStatus reports a task status to the cluster's event stream and
// forwards it to its framework. A status the framework must acknowledge
// goes out only once those before it are acknowledged: while its task has
// an older one pending, that one is sent instead (again), and the
// acknowledgement sends the next (sendPending). A status that needs no
// acknowledgement (reconciliation, a launch refused before its task
// existed) goes out as it is.
func (l *leader) sendStatus(st protocol.TaskStatus) {
	l.taskEvent(st)
	if st.UUID != "" {
		if t, ok := l.m.View().Task(st.FrameworkID, st.TaskID); ok {
			l.sendPending(t)
			return
		}
	}
	l.publishStatus(st)
}

// sendPending sends the oldest status of t its framework has not
// acknowledged, if any.
func (l *leader) sendPending(t *state.Task) {
	if st, ok := t.Pending(); ok {
		l.publishStatus(st)
	}
}

// publishStatus sends a framework a status update event.
func (l *leader) publishStatus(st protocol.TaskStatus) {
	l.publishFramework(st.FrameworkID, protocol.MsgStatusUpdateEvent, protocol.StatusUpdateEvent{Status: st, UUID: st.UUID})
}

// teardown is a framework's own teardown call: it removes the framework
// (removeFramework).
func (l *leader) teardown(ctx context.Context, id protocol.FrameworkID) error {
	if err := l.admit(id); err != nil {
		return err
	}
	return l.removeFramework(ctx, id)
}

// accept launches tasks on offers. The allocator re-validates the accept
// against the current offer book first (stale, forged or someone else's
// offers, or tasks beyond the offers, are refused and change nothing);
// then the launch is committed through Raft, and only then sent to the
// agent, so a launch the master forgets can never run.
func (l *leader) accept(ctx context.Context, r *protocol.AcceptRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	var tasks []protocol.TaskInfo
	for _, op := range r.Operations {
		for _, t := range op.Tasks {
			t.GroupID = ""
			if op.Type == protocol.OperationLaunchGroup {
				t.GroupID = op.GroupID
			}
			tasks = append(tasks, t)
		}
	}
	if len(tasks) == 0 {
		return l.declineCounted(&protocol.DeclineRequest{FrameworkID: r.FrameworkID, OfferIDs: r.OfferIDs, Filters: r.Filters})
	}
	if err := l.runAs(r.FrameworkID, tasks); err != nil {
		l.refuseLaunch(r, err)
		return err
	}
	resources := make([]protocol.Resources, len(tasks))
	for i, t := range tasks {
		resources[i] = t.Resources
	}
	now := time.Now()
	l.mu.Lock()
	var made time.Time
	// Every task must name the offers' agent; the allocator checks the rest.
	if first, ok := l.alloc.Offer(r.OfferIDs[0]); ok && first.FrameworkID == r.FrameworkID {
		made = first.Made
		for _, t := range tasks {
			if t.AgentID != first.AgentID {
				l.mu.Unlock()
				err := fmt.Errorf("%w: task %s names agent %s, the offers are on %s",
					protocol.ErrOfferMismatch, t.TaskID, t.AgentID, first.AgentID)
				l.refuseLaunch(r, err)
				return err
			}
		}
	}
	if err := l.checkNonPreemptible(r.FrameworkID, r.OfferIDs, tasks); err != nil {
		l.mu.Unlock()
		l.refuseLaunch(r, err)
		return err
	}
	acc, err := l.alloc.AcceptTasks(r.FrameworkID, r.OfferIDs, resources, now)
	if err == nil && acc.Remainder && r.Filters != nil && r.Filters.RefuseSeconds > 0 {
		// As in Mesos, an accept's filters apply to what it left unused;
		// without filters the remainder is offered again at once.
		refuse := time.Duration(r.Filters.RefuseSeconds * float64(time.Second))
		if ferr := l.alloc.RefuseAgent(r.FrameworkID, acc.Agent, refuse, now); ferr != nil {
			l.logger.Warn("could not filter an accept's remainder", "framework_id", r.FrameworkID, "error", ferr)
		}
	}
	l.mu.Unlock()
	if err != nil {
		l.refuseLaunch(r, err)
		return err
	}
	l.m.metrics.launchedAfter(made, now)
	agent := acc.Agent
	// A task's kind is the kind of offer it was launched on, whatever the
	// framework sent; its resources name the GPU devices the allocator
	// gave it.
	for i := range tasks {
		tasks[i].Kind = protocol.OfferKind(acc.Kinds[i])
		tasks[i].Resources = acc.Tasks[i]
		resources[i] = acc.Tasks[i]
	}
	_, err = l.apply(ctx, state.CmdLaunchTasks, state.LaunchTasks{
		FrameworkID: r.FrameworkID, AgentID: agent, Tasks: tasks, Time: now.UnixNano(),
	})
	if err != nil {
		l.mu.Lock()
		for _, res := range resources {
			if rerr := l.alloc.Recover(r.FrameworkID, agent, res); rerr != nil {
				l.logger.Warn("could not return resources of a refused launch", "error", rerr)
			}
		}
		l.mu.Unlock()
		l.kick()
		return err
	}
	l.sendLaunches(agent, r.FrameworkID, tasks)
	return nil
}

// decline returns offers; without filters the default refuse filter
// applies, except to a leftover decline, which gives the resources to the
// leftover pool and installs a filter only when it names one.
func (l *leader) decline(r *protocol.DeclineRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	refuse := offers.DefaultFilter
	if r.Filters != nil {
		refuse = time.Duration(r.Filters.RefuseSeconds * float64(time.Second))
	}
	decline := l.alloc.Decline
	if r.Leftover {
		decline = l.alloc.DeclineLeftover
	}
	l.mu.Lock()
	err := decline(r.FrameworkID, r.OfferIDs, refuse, time.Now())
	l.mu.Unlock()
	l.kick()
	return err
}

func (l *leader) setSuppressed(ctx context.Context, id protocol.FrameworkID, suppressed bool) error {
	if err := l.admit(id); err != nil {
		return err
	}
	if _, err := l.apply(ctx, state.CmdSetFrameworkSuppressed, state.SetFrameworkSuppressed{FrameworkID: id, Suppressed: suppressed}); err != nil {
		return err
	}
	l.mu.Lock()
	var err error
	if suppressed {
		err = l.alloc.Suppress(id)
	} else {
		err = l.alloc.Revive(id)
		l.shares.declared(id)
	}
	l.mu.Unlock()
	l.kick()
	return err
}

// revive opens offers again, clears the framework's decline filters and
// sets the refusals the request carries (a resubscribing driver's filters
// still in force); a refusal of an agent the leader does not know is
// dropped.
func (l *leader) revive(ctx context.Context, r *protocol.ReviveRequest) error {
	id := r.FrameworkID
	if err := l.admit(id); err != nil {
		return err
	}
	if _, err := l.apply(ctx, state.CmdSetFrameworkSuppressed, state.SetFrameworkSuppressed{FrameworkID: id}); err != nil {
		return err
	}
	now := time.Now()
	l.mu.Lock()
	// One step under the lock, so no round offers a refused agent between
	// the revive and its refusal.
	err := l.alloc.Revive(id)
	for _, f := range r.Refusals {
		if err != nil {
			break
		}
		d := time.Duration(f.Seconds * float64(time.Second))
		if rerr := l.alloc.RefuseAgent(id, f.AgentID, d, now); rerr != nil && !errors.Is(rerr, offers.ErrUnknownAgent) {
			err = rerr
		}
	}
	l.shares.declared(id)
	l.mu.Unlock()
	l.kick()
	return err
}

// kill asks the task's agent to kill it.
func (l *leader) kill(r *protocol.KillRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	t, ok := l.m.View().Task(r.FrameworkID, r.TaskID)
	if !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownTask, r.TaskID)
	}
	l.sendKill(t.AgentID, r.FrameworkID, r.TaskID, r.GracePeriod)
	return nil
}

func (l *leader) sendKill(agent protocol.AgentID, fw protocol.FrameworkID, task protocol.TaskID, grace time.Duration) {
	l.sendAgent(agent, protocol.MsgKillCommand, protocol.KillCommand{FrameworkID: fw, TaskID: task, GracePeriod: grace})
}

// reconcile sends the latest known status of the named tasks (explicit),
// or of all the framework's tasks (implicit, no tasks named). A task the
// master does not know is reported LOST, as Mesos does.
func (l *leader) reconcile(r *protocol.ReconcileRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	v := l.m.View()
	if len(r.Tasks) == 0 {
		for _, t := range v.TasksByFramework(r.FrameworkID) {
			l.sendStatus(reconciled(t.Status))
		}
		return nil
	}
	for _, rt := range r.Tasks {
		t, ok := v.Task(r.FrameworkID, rt.TaskID)
		if !ok {
			l.sendStatus(protocol.TaskStatus{TaskID: rt.TaskID, FrameworkID: r.FrameworkID, AgentID: rt.AgentID,
				State: protocol.TaskLost, Reason: protocol.ReasonTaskUnknown, Message: "task unknown to the master",
				Timestamp: time.Now().UnixNano()})
			continue
		}
		l.sendStatus(reconciled(t.Status))
	}
	return nil
}

// reconciled is a task's latest status as reconciliation reports it: with
// ReasonReconciliation, as Mesos does, and no update UUID (nothing to
// acknowledge).
func reconciled(st protocol.TaskStatus) protocol.TaskStatus {
	st.UUID = ""
	st.Reason = protocol.ReasonReconciliation
	return st
}

// acknowledge records that a framework received status updates; the
// reply lists the stale or unknown ones.
func (l *leader) acknowledge(ctx context.Context, r *protocol.AcknowledgeRequest) (*protocol.AcknowledgeReply, error) {
	if err := l.admit(r.FrameworkID); err != nil {
		return nil, err
	}
	c := state.AcknowledgeStatus{FrameworkID: r.FrameworkID, Acks: make([]state.StatusAck, len(r.Acks))}
	for i, a := range r.Acks {
		c.Acks[i] = state.StatusAck{TaskID: a.TaskID, UUID: a.UUID}
	}
	res, err := l.apply(ctx, state.CmdAcknowledgeStatus, c)
	if err != nil {
		return nil, err
	}
	reply := &protocol.AcknowledgeReply{}
	v := l.m.View()
	for i, o := range res.(state.AckResult) {
		switch {
		case o.Err != nil:
			reply.Refused = append(reply.Refused, protocol.Refusal{TaskID: r.Acks[i].TaskID, UUID: r.Acks[i].UUID, Error: protocol.ToWire(o.Err)})
		case !o.Removed:
			// The next status of the task, now that this one is through.
			if t, ok := v.Task(r.FrameworkID, r.Acks[i].TaskID); ok {
				l.sendPending(t)
			}
		}
	}
	return reply, nil
}

// demand records a framework's pending task shapes for the allocator: the
// fair part (Demand less Optional, and at least MustStart) for the H-DRF
// phase, Optional and RemainingWork for the leftover phase. An empty report
// withdraws the declaration. The report is recorded before admit opens the
// offers of a framework's first request, so no round sees it undeclared.
func (l *leader) demand(r *protocol.DemandRequest) error {
	if _, ok := l.m.View().Framework(r.FrameworkID); !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, r.FrameworkID)
	}
	d := offers.Declaration{
		Demand:        demands(r.Demand),
		MustStart:     demands(r.MustStart),
		Optional:      demands(r.Optional),
		RemainingWork: r.RemainingWork,
	}
	l.mu.Lock()
	err := l.alloc.Declare(r.FrameworkID, d)
	l.shares.declared(r.FrameworkID)
	l.mu.Unlock()
	if aerr := l.admit(r.FrameworkID); err == nil {
		err = aerr
	}
	l.kick()
	return err
}

func demands(shapes []protocol.TaskShape) []offers.Demand {
	out := make([]offers.Demand, 0, len(shapes))
	for _, s := range shapes {
		out = append(out, offers.Demand{Resources: s.Resources, Ports: s.Ports, Count: s.Count, Constraints: s.Constraints})
	}
	return out
}

// admit refuses requests naming a framework the state does not hold, and
// opens the offers of a framework on its first request after subscribing
// (unless it subscribed suppressed): that request shows it now listens on
// its event subject.
func (l *leader) admit(id protocol.FrameworkID) error {
	if _, ok := l.m.View().Framework(id); !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, id)
	}
	l.mu.Lock()
	open, waiting := l.opening[id]
	delete(l.opening, id)
	var err error
	if waiting && open {
		err = l.alloc.Revive(id)
		l.shares.declared(id)
	}
	l.mu.Unlock()
	if waiting && open {
		l.kick()
	}
	return err
}
