package master

import (
	"context"
	"fmt"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// registerAgent admits a new agent with a fresh ID.
func (l *leader) registerAgent(ctx context.Context, principal string, r *protocol.RegisterRequest) (*protocol.RegisterReply, error) {
	if id, ok := l.registeredAlready(principal, r); ok {
		l.logger.Info("agent registration repeated; answered with the agent it registered", "agent_id", id,
			"hostname", r.Hostname, "principal", principal)
		return &protocol.RegisterReply{AgentID: id, HeartbeatInterval: l.pace()}, nil
	}
	release, err := l.reserveAgent(principal)
	if err != nil {
		return nil, err
	}
	defer release()
	now := time.Now()
	id := protocol.NewAgentID()
	_, err = l.apply(ctx, state.CmdRegisterAgent, state.RegisterAgent{
		AgentID: id, Principal: principal, Hostname: r.Hostname, HTTPAddr: r.Addresses.HTTP, Resources: r.Resources,
		Attributes: r.Attributes, Version: r.Version, Time: now.UnixNano(),
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.joining[id] = offers.AgentInfo{ID: id, Hostname: r.Hostname, Total: r.Resources, Attributes: r.Attributes}
	l.lastSeen[id] = now
	l.credentials.add(principal, id)
	l.mu.Unlock()
	l.logger.Info("agent registered", "agent_id", id, "hostname", r.Hostname, "principal", principal)
	l.agentEvent(id, r.Hostname, "active")
	return &protocol.RegisterReply{AgentID: id, HeartbeatInterval: l.pace()}, nil
}

// reregisterAgent takes back an agent that restarted or lost its master,
// reconciling the tasks it reports: tasks it no longer runs are reported to
// their frameworks, tasks the master gave up on are killed, and launches it
// has not seen yet are sent again.
func (l *leader) reregisterAgent(ctx context.Context, principal string, r *protocol.ReregisterRequest) (*protocol.RegisterReply, error) {
	now := time.Now()
	res, err := l.apply(ctx, state.CmdReregisterAgent, state.ReregisterAgent{
		AgentID: r.AgentID, Principal: principal, Hostname: r.Hostname, HTTPAddr: r.Addresses.HTTP, Resources: r.Resources,
		Attributes: r.Attributes, Version: r.Version, Tasks: r.Tasks, Time: now.UnixNano(),
	})
	if err != nil {
		return nil, err
	}
	rr, _ := res.(state.ReregisterResult)
	l.mu.Lock()
	delete(l.joining, r.AgentID)
	rescinds, _ := l.alloc.RemoveAgent(r.AgentID)
	err = l.addAgentLocked(offers.AgentInfo{ID: r.AgentID, Hostname: r.Hostname, Total: r.Resources, Attributes: r.Attributes})
	if err == nil {
		for _, t := range l.view().TasksByAgent(r.AgentID) {
			if !t.Terminal() {
				if uerr := l.alloc.AddUsage(t.FrameworkID, t.AgentID, t.Info.Resources); uerr != nil {
					l.logger.Warn("reregistered task does not fit", "task_id", t.ID, "error", uerr)
				}
			}
		}
		l.lastSeen[r.AgentID] = now
		l.credentials.add(principal, r.AgentID)
	}
	l.mu.Unlock()
	l.sendRescinds(rescinds)
	if err != nil {
		return nil, err
	}
	for _, st := range rr.Changed {
		l.sendStatus(st)
	}
	for _, o := range rr.Orphans {
		l.sendKill(r.AgentID, o.FrameworkID, o.TaskID, 0)
	}
	l.resendLaunches(rr.Relaunch)
	l.logger.Info("agent reregistered", "agent_id", r.AgentID, "tasks", len(r.Tasks), "orphans", len(rr.Orphans))
	agentState := "active"
	if a, ok := l.view().Agent(r.AgentID); ok {
		agentState = string(a.State)
	}
	l.agentEvent(r.AgentID, r.Hostname, agentState)
	l.kick()
	return &protocol.RegisterReply{AgentID: r.AgentID, HeartbeatInterval: l.pace()}, nil
}

// heartbeat records that an agent is alive. An agent the leader does not
// consider active is told it is unknown, so it reregisters.
func (l *leader) heartbeat(id protocol.AgentID) (*protocol.HeartbeatReply, error) {
	l.mu.Lock()
	if _, ok := l.lastSeen[id]; !ok {
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: %s (reregister)", protocol.ErrUnknownAgent, id)
	}
	l.lastSeen[id] = time.Now()
	reply := &protocol.HeartbeatReply{HeartbeatInterval: l.paceLocked()}
	info, joining := l.joining[id]
	var err error
	if joining {
		delete(l.joining, id)
		err = l.addAgentLocked(info)
	}
	l.mu.Unlock()
	if joining {
		l.kick()
	}
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// statusUpdate commits a batch of an agent's status updates in one Raft
// command, forwards what applied to the frameworks, and acknowledges the
// whole batch to the agent: each update is safe in Raft or can never apply
// (its task is gone, say), so the agent may stop resending it either way.
func (l *leader) statusUpdate(ctx context.Context, r *protocol.StatusUpdateRequest) (*protocol.StatusUpdateReply, error) {
	ups := make([]protocol.StatusUpdate, len(r.Updates))
	for i, u := range r.Updates {
		u.Status.AgentID = r.AgentID
		ups[i] = u
	}
	res, err := l.apply(ctx, state.CmdUpdateTaskStatus, state.UpdateTaskStatus{Updates: ups, Time: time.Now().UnixNano()})
	if err != nil {
		return nil, err
	}
	ur, _ := res.(state.UpdateResult)
	l.recoverFinished(r.AgentID, ur.Applied)
	// Each task's oldest unacknowledged status goes to its framework once
	// per batch. A duplicate is an update resent after its commit's reply
	// was lost (say, to a leader change); its task's pending status is sent
	// again too.
	v := l.view()
	sent := map[state.TaskKey]bool{}
	send := func(st protocol.TaskStatus) {
		k := state.TaskKey{FrameworkID: st.FrameworkID, TaskID: st.TaskID}
		if t, ok := v.Task(k.FrameworkID, k.TaskID); ok && !sent[k] {
			sent[k] = true
			l.sendPending(t)
		}
	}
	for _, st := range ur.Applied {
		l.taskEvent(st)
		send(st)
	}
	byUUID := make(map[protocol.StatusUUID]protocol.TaskStatus, len(ur.Duplicates))
	for _, u := range ups {
		byUUID[u.UUID] = u.Status
	}
	for _, uuid := range ur.Duplicates {
		send(byUUID[uuid])
	}
	acks := make([]protocol.StatusAck, len(ups))
	for i, u := range ups {
		acks[i] = protocol.StatusAck{FrameworkID: u.Status.FrameworkID, TaskID: u.Status.TaskID, UUID: u.UUID}
	}
	l.sendAgent(r.AgentID, protocol.MsgAckCommand, protocol.AckCommand{Acks: acks})
	reply := &protocol.StatusUpdateReply{}
	for _, e := range ur.Errors {
		reply.Refused = append(reply.Refused, protocol.Refusal{TaskID: e.Task.TaskID, UUID: e.UUID, Error: protocol.ToWire(e.Err)})
	}
	return reply, nil
}

// recoverFinished returns the resources of tasks that reached a terminal
// state to the allocator.
func (l *leader) recoverFinished(agent protocol.AgentID, applied []protocol.TaskStatus) {
	view := l.view()
	recovered := false
	l.mu.Lock()
	for _, st := range applied {
		if !st.State.Terminal() {
			continue
		}
		l.metrics.taskEnded(st.State, st.Reason)
		if t, ok := view.Task(st.FrameworkID, st.TaskID); ok {
			if err := l.alloc.Recover(st.FrameworkID, agent, t.Info.Resources); err != nil {
				l.logger.Warn("could not recover a finished task's resources", "task_id", st.TaskID, "error", err)
			}
			recovered = true
		}
	}
	l.mu.Unlock()
	if recovered {
		l.kick()
	}
}

// agentUnreachable handles an agent that missed its heartbeats: its tasks
// become UNREACHABLE (partition-aware frameworks) or LOST, frameworks are
// told, and its offers are rescinded.
func (l *leader) agentUnreachable(id protocol.AgentID, now time.Time) error {
	ctx, cancel := l.timed()
	defer cancel()
	_, err := l.agentOut(ctx, id, now, state.MarkAgentTasks{
		AgentID: id, State: protocol.TaskUnreachable, Reason: "agent_unreachable",
		Message: "agent missed its heartbeats", Time: now.UnixNano(),
	}, state.AgentUnreachable)
	if err == nil {
		l.logger.Warn("agent unreachable", "agent_id", id)
	}
	return err
}

// agentOut takes an agent out of the allocation: its live tasks are marked
// as mark says, its state becomes to, its offers are rescinded, and
// frameworks and the event stream are told.
func (l *leader) agentOut(ctx context.Context, id protocol.AgentID, now time.Time, mark state.MarkAgentTasks, to state.AgentState) (*state.Agent, error) {
	res, err := l.apply(ctx, state.CmdMarkAgentTasks, mark)
	if err != nil {
		return nil, err
	}
	ares, err := l.apply(ctx, state.CmdSetAgentState, state.SetAgentState{AgentID: id, State: to, Time: now.UnixNano()})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	delete(l.lastSeen, id)
	if a, ok := l.view().Agent(id); ok {
		l.credentials.remove(a.Principal, id)
	}
	_, joining := l.joining[id]
	delete(l.joining, id)
	var rescinds []offers.Rescind
	if !joining {
		rescinds, _ = l.alloc.RemoveAgent(id)
	}
	l.mu.Unlock()
	l.sendRescinds(rescinds)
	if statuses, ok := res.([]protocol.TaskStatus); ok {
		for _, st := range statuses {
			l.sendStatus(st)
		}
	}
	hostname := ""
	if a, ok := l.view().Agent(id); ok {
		hostname = a.Hostname
	}
	l.agentEvent(id, hostname, string(to))
	l.sendAgentLost(protocol.AgentLostEvent{AgentID: id, Hostname: hostname, State: string(to)})
	a, _ := ares.(*state.Agent)
	return a, nil
}
