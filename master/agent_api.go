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
func (l *leader) registerAgent(ctx context.Context, r *protocol.RegisterRequest) (*protocol.RegisterReply, error) {
	now := time.Now()
	id := protocol.NewAgentID()
	_, err := l.apply(ctx, state.CmdRegisterAgent, state.RegisterAgent{
		AgentID: id, Hostname: r.Hostname, HTTPAddr: r.Addresses.HTTP, Resources: r.Resources,
		Attributes: r.Attributes, Version: r.Version, Time: now.UnixNano(),
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.joining[id] = offers.AgentInfo{ID: id, Hostname: r.Hostname, Total: r.Resources, Attributes: r.Attributes}
	l.lastSeen[id] = now
	l.mu.Unlock()
	l.logger.Info("agent registered", "agent_id", id, "hostname", r.Hostname)
	return &protocol.RegisterReply{AgentID: id, HeartbeatInterval: l.m.cfg.AgentHeartbeat}, nil
}

// reregisterAgent takes back an agent that restarted or lost its master,
// reconciling the tasks it reports: tasks it no longer runs are reported to
// their frameworks, and tasks the master gave up on are killed.
func (l *leader) reregisterAgent(ctx context.Context, r *protocol.ReregisterRequest) (*protocol.RegisterReply, error) {
	now := time.Now()
	res, err := l.apply(ctx, state.CmdReregisterAgent, state.ReregisterAgent{
		AgentID: r.AgentID, Hostname: r.Hostname, HTTPAddr: r.Addresses.HTTP, Resources: r.Resources,
		Attributes: r.Attributes, Version: r.Version, Tasks: r.Tasks, Time: now.UnixNano(),
	})
	if err != nil {
		return nil, err
	}
	rr, _ := res.(state.ReregisterResult)
	l.mu.Lock()
	delete(l.joining, r.AgentID)
	rescinds, _ := l.alloc.RemoveAgent(r.AgentID)
	err = l.alloc.AddAgent(offers.AgentInfo{ID: r.AgentID, Hostname: r.Hostname, Total: r.Resources, Attributes: r.Attributes})
	if err == nil {
		for _, t := range l.m.View().TasksByAgent(r.AgentID) {
			if !t.Terminal() {
				if uerr := l.alloc.AddUsage(t.FrameworkID, t.AgentID, t.Info.Resources); uerr != nil {
					l.logger.Warn("reregistered task does not fit", "task_id", t.ID, "error", uerr)
				}
			}
		}
		l.lastSeen[r.AgentID] = now
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
	l.logger.Info("agent reregistered", "agent_id", r.AgentID, "tasks", len(r.Tasks), "orphans", len(rr.Orphans))
	l.kick()
	return &protocol.RegisterReply{AgentID: r.AgentID, HeartbeatInterval: l.m.cfg.AgentHeartbeat}, nil
}

// heartbeat records that an agent is alive. An agent the leader does not
// consider active is told it is unknown, so it reregisters.
func (l *leader) heartbeat(id protocol.AgentID) error {
	l.mu.Lock()
	if _, ok := l.lastSeen[id]; !ok {
		l.mu.Unlock()
		return fmt.Errorf("%w: %s (reregister)", protocol.ErrUnknownAgent, id)
	}
	l.lastSeen[id] = time.Now()
	info, joining := l.joining[id]
	var err error
	if joining {
		delete(l.joining, id)
		err = l.alloc.AddAgent(info)
	}
	l.mu.Unlock()
	if joining {
		l.kick()
	}
	return err
}

// statusUpdate commits an agent's status update, forwards it to the
// framework, and acknowledges it to the agent once it is safe in Raft.
// Resources of a task that ended go back to the allocator.
func (l *leader) statusUpdate(ctx context.Context, r *protocol.StatusUpdateRequest) error {
	up := r.Update
	up.Status.AgentID = r.AgentID
	res, err := l.apply(ctx, state.CmdUpdateTaskStatus, state.UpdateTaskStatus{
		Updates: []protocol.StatusUpdate{up}, Time: time.Now().UnixNano(),
	})
	if err != nil {
		return err
	}
	ur, _ := res.(state.UpdateResult)
	for _, st := range ur.Applied {
		if st.State.Terminal() {
			if t, ok := l.m.View().Task(st.FrameworkID, st.TaskID); ok {
				l.mu.Lock()
				if err := l.alloc.Recover(st.FrameworkID, r.AgentID, t.Info.Resources); err != nil {
					l.logger.Warn("could not recover a finished task's resources", "task_id", st.TaskID, "error", err)
				}
				l.mu.Unlock()
				l.kick()
			}
		}
		l.sendStatus(st)
	}
	// A duplicate is an update resent after its commit's reply was lost
	// (say, to a leader change); forward it again while the framework has
	// not acknowledged it.
	for _, uuid := range ur.Duplicates {
		if t, ok := l.m.View().Task(up.Status.FrameworkID, up.Status.TaskID); ok && t.StatusUUID == uuid && !t.Acked {
			l.sendStatus(t.Status)
		}
	}
	subject, err := l.subj.AgentCmd(r.AgentID)
	if err != nil {
		return err
	}
	// The update is safe in Raft (or can never apply, e.g. its task is
	// gone), so the agent may stop resending it either way.
	st := up.Status
	l.publish(subject, protocol.MsgAckCommand, protocol.AckCommand{FrameworkID: st.FrameworkID, TaskID: st.TaskID, UUID: up.UUID})
	if len(ur.Errors) > 0 {
		return ur.Errors[0].Err
	}
	return nil
}

// agentUnreachable handles an agent that missed its heartbeats: its tasks
// become UNREACHABLE (partition-aware frameworks) or LOST, frameworks are
// told, and its offers are rescinded.
func (l *leader) agentUnreachable(id protocol.AgentID, now time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.m.cfg.RequestTimeout)
	defer cancel()
	res, err := l.apply(ctx, state.CmdMarkAgentTasks, state.MarkAgentTasks{
		AgentID: id, State: protocol.TaskUnreachable, Reason: "agent_unreachable",
		Message: "agent missed its heartbeats", Time: now.UnixNano(),
	})
	if err != nil {
		return err
	}
	if _, err := l.apply(ctx, state.CmdSetAgentState, state.SetAgentState{
		AgentID: id, State: state.AgentUnreachable, Time: now.UnixNano(),
	}); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.lastSeen, id)
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
	l.logger.Warn("agent unreachable", "agent_id", id)
	return nil
}
