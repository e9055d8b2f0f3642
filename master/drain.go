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

// Draining agents (POST /v1/agents/{id}/drain and .../activate), as Nomad's
// node drain and Mesos's DRAIN_AGENT: a draining agent keeps running its
// tasks but is offered to nobody, so an operator can empty it before taking
// it down. The state is replicated, so a new leader and a reregistering
// agent keep it.

// addAgentLocked adds an agent to the allocator, draining when the
// replicated state says so. l.mu is held.
func (l *leader) addAgentLocked(info offers.AgentInfo) error {
	if err := l.alloc.AddAgent(info); err != nil {
		return err
	}
	if a, ok := l.view().Agent(info.ID); ok && a.State == state.AgentDraining {
		_, err := l.alloc.SetDraining(info.ID, true) // a fresh agent holds no offers
		return err
	}
	return nil
}

// setDraining drains an agent (draining), with a deadline for the tasks
// on it (Unix nanoseconds, 0 for none), or makes it active again, and
// returns it. Only an active or draining agent can change; draining again
// replaces the deadline. The frameworks with tasks on the agent are warned
// of a new deadline, or told that a lifted one is withdrawn
// (drain_deadline.go).
func (l *leader) setDraining(ctx context.Context, id protocol.AgentID, draining bool, deadline int64) (*state.Agent, error) {
	a, ok := l.view().Agent(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", protocol.ErrUnknownAgent, id)
	}
	if a.State != state.AgentActive && a.State != state.AgentDraining {
		return nil, fmt.Errorf("%w: agent %s is %s", protocol.ErrInvalidArgument, id, a.State)
	}
	if deadline < 0 || deadline != 0 && !draining {
		return nil, fmt.Errorf("%w: drain deadline %d", protocol.ErrInvalidArgument, deadline)
	}
	want := state.AgentActive
	if draining {
		want = state.AgentDraining
	}
	res, err := l.apply(ctx, state.CmdSetAgentState, state.SetAgentState{AgentID: id, State: want, Time: time.Now().UnixNano(),
		DrainDeadline: deadline})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	// An agent that has not heartbeated yet is not in the allocator; it
	// joins draining (addAgentLocked).
	rescinds, aerr := l.alloc.SetDraining(id, draining)
	l.mu.Unlock()
	if aerr != nil && !errors.Is(aerr, offers.ErrUnknownAgent) {
		l.logger.Warn("could not change an agent's draining in the allocator", "agent_id", id, "error", aerr)
	}
	l.sendRescinds(rescinds)
	l.kick()
	l.logger.Info("agent state set by the operator", "agent_id", id, "state", want, "drain_deadline", deadline)
	l.agentEvent(id, a.Hostname, string(want))
	ag, _ := res.(*state.Agent)
	action := protocol.OperatorAction{Action: protocol.OperatorActivateAgent, AgentID: id}
	if draining {
		action.Action = protocol.OperatorDrainAgent
		if deadline != 0 {
			action.Detail = "deadline " + time.Unix(0, deadline).UTC().Format(time.RFC3339Nano)
		}
	}
	l.operatorEvent(action)
	if ag != nil {
		l.drainWarnings(a, ag)
	}
	return ag, nil
}

// markGone takes an agent out of the cluster for good, as Mesos's
// MARK_AGENT_GONE: its live tasks become LOST (agent_gone) so frameworks
// can run them elsewhere, it may never reregister, and if it still runs,
// no longer known to the master, it kills its tasks. Marking a gone agent
// again changes nothing.
func (l *leader) markGone(ctx context.Context, id protocol.AgentID) (*state.Agent, error) {
	a, ok := l.view().Agent(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", protocol.ErrUnknownAgent, id)
	}
	if a.State == state.AgentGone {
		return a, nil
	}
	now := time.Now()
	ag, err := l.agentOut(ctx, id, now, state.MarkAgentTasks{
		AgentID: id, State: protocol.TaskLost, Reason: protocol.ReasonAgentGone,
		Message: "the operator marked the agent gone", Time: now.UnixNano(),
	}, state.AgentGone)
	if err != nil {
		return nil, err
	}
	l.kick()
	l.logger.Warn("agent marked gone by the operator", "agent_id", id)
	l.operatorEvent(protocol.OperatorAction{Action: protocol.OperatorMarkAgentGone, AgentID: id})
	return ag, nil
}
