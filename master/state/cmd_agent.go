package state

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// RegisterAgent adds a new agent, active, with the ID the leader assigned.
// Apply result: the stored *Agent. Errors: ErrDuplicate, ErrInvalidArgument.
type RegisterAgent struct {
	AgentID protocol.AgentID `msgpack:"ag"`
	// Principal is the agent's credential ("" for none).
	Principal  string              `msgpack:"principal,omitempty"`
	Hostname   string              `msgpack:"host"`
	HTTPAddr   string              `msgpack:"http,omitempty"`
	Resources  protocol.Resources  `msgpack:"res"`
	Attributes protocol.Attributes `msgpack:"attrs,omitempty"`
	Version    string              `msgpack:"ver,omitempty"`
	Time       int64               `msgpack:"time"`
}

// SetAgentState moves an agent to State at Time. Becoming unreachable
// records UnreachableAt (an agent already unreachable keeps the earlier
// time); becoming active or draining clears it. Gone is final: a gone agent
// changes state no more. Tasks are not touched: the leader pairs this with
// MarkAgentTasks. Draining sets the agent's DrainDeadline to DrainDeadline
// (0: none, which also lifts an earlier drain's deadline); every other
// state clears it, and only a draining agent may be given one
// (ErrInvalidArgument). Apply result: the stored *Agent.
type SetAgentState struct {
	AgentID protocol.AgentID `msgpack:"ag"`
	State   AgentState       `msgpack:"st"`
	Time    int64            `msgpack:"time"`
	// DrainDeadline is when the tasks still on a draining agent are
	// killed, Unix nanoseconds (0: never).
	DrainDeadline int64 `msgpack:"drain_by,omitempty"`
}

// RemoveAgent deletes an agent. Its tasks that are not terminal become
// LOST (ReasonAgentRemoved) with a new status update for their frameworks;
// all its tasks stay in the table until acknowledged, as any terminal task.
// Apply result: []protocol.TaskStatus, the generated statuses, sorted.
type RemoveAgent struct {
	AgentID protocol.AgentID `msgpack:"ag"`
	Time    int64            `msgpack:"time"`
}

// MarkAgentTasks moves every non-terminal task on an agent to State, with
// Reason and Message, e.g. after a heartbeat timeout. State is UNREACHABLE
// or a terminal state. UNREACHABLE is given only to tasks of frameworks
// with the partition_aware capability; the others become LOST, as in Mesos.
// Tasks already in the target state are left alone. Each change is a new
// unacknowledged status update with a generated UUID.
// Apply result: []protocol.TaskStatus, the generated statuses, sorted.
type MarkAgentTasks struct {
	AgentID protocol.AgentID   `msgpack:"ag"`
	State   protocol.TaskState `msgpack:"st"`
	Reason  string             `msgpack:"reason,omitempty"`
	Message string             `msgpack:"msg,omitempty"`
	Time    int64              `msgpack:"time"`
}

func (c *RegisterAgent) validate() error {
	if err := checkID("agent_id", c.AgentID); err != nil {
		return err
	}
	if c.Principal != "" && !protocol.ValidPrincipal(c.Principal) {
		return errorf(protocol.ErrInvalidArgument, "principal %q", clip(c.Principal))
	}
	req := protocol.RegisterRequest{
		Hostname: c.Hostname, Addresses: protocol.Addresses{HTTP: c.HTTPAddr},
		Resources: c.Resources, Attributes: c.Attributes, Version: c.Version,
	}
	if err := req.Validate(); err != nil {
		return err
	}
	return checkTime("time", c.Time)
}

func (s *State) applyRegisterAgent(_ uint64, body []byte) (any, error) {
	var c RegisterAgent
	if err := decode(CmdRegisterAgent, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("register agent: %w", err)
	}
	if _, ok := s.cur.agents.get(string(c.AgentID)); ok {
		return nil, errorf(protocol.ErrDuplicate, "register agent %s", c.AgentID)
	}
	a := &Agent{
		ID: c.AgentID, Hostname: c.Hostname, Principal: c.Principal, HTTPAddr: c.HTTPAddr, Resources: c.Resources,
		Attributes: c.Attributes, Version: c.Version, State: AgentActive,
		RegisteredAt: c.Time, UpdatedAt: c.Time,
	}
	s.cur.agents = s.cur.agents.set(string(a.ID), a)
	return a, nil
}

func (s *State) applySetAgentState(_ uint64, body []byte) (any, error) {
	var c SetAgentState
	if err := decode(CmdSetAgentState, body, &c); err != nil {
		return nil, err
	}
	if !c.State.Valid() {
		return nil, errorf(protocol.ErrInvalidArgument, "set agent state: unknown state %q", clip(string(c.State)))
	}
	if err := checkTime("time", c.Time); err != nil {
		return nil, fmt.Errorf("set agent state: %w", err)
	}
	if c.DrainDeadline < 0 || c.DrainDeadline != 0 && c.State != AgentDraining {
		return nil, errorf(protocol.ErrInvalidArgument, "set agent state %s: drain deadline %d", c.State, c.DrainDeadline)
	}
	old, err := s.agent("set agent state", c.AgentID)
	if err != nil {
		return nil, err
	}
	if old.State == AgentGone && c.State != AgentGone {
		return nil, fmt.Errorf("set agent %s %s: %w", c.AgentID, c.State, ErrAgentGone)
	}
	a := *old
	switch c.State {
	case AgentUnreachable:
		if old.State != AgentUnreachable {
			a.UnreachableAt = c.Time
		}
	case AgentActive, AgentDraining:
		a.UnreachableAt = 0
	}
	a.DrainDeadline = 0
	if c.State == AgentDraining {
		a.DrainDeadline = c.DrainDeadline
	}
	if a.State != c.State {
		a.State, a.UpdatedAt = c.State, c.Time
	}
	s.cur.agents = s.cur.agents.set(string(a.ID), &a)
	return &a, nil
}

func (s *State) applyRemoveAgent(index uint64, body []byte) (any, error) {
	var c RemoveAgent
	if err := decode(CmdRemoveAgent, body, &c); err != nil {
		return nil, err
	}
	if err := checkTime("time", c.Time); err != nil {
		return nil, fmt.Errorf("remove agent: %w", err)
	}
	a, err := s.agent("remove agent", c.AgentID)
	if err != nil {
		return nil, err
	}
	var out []protocol.TaskStatus
	for _, t := range s.cur.TasksByAgent(a.ID) {
		if t.Terminal() {
			continue
		}
		st := generatedStatus(protocol.TaskLost, protocol.ReasonAgentRemoved, "agent removed", c.Time)
		out = append(out, s.cur.setStatus(t, st, s.cur.nextUUID(index), c.Time).Status)
	}
	s.cur.agents = s.cur.agents.delete(string(a.ID))
	return out, nil
}

func (c *MarkAgentTasks) validate() error {
	if c.State != protocol.TaskUnreachable && !c.State.Terminal() {
		return errorf(protocol.ErrInvalidArgument, "state %q is neither UNREACHABLE nor terminal", clip(string(c.State)))
	}
	if len(c.Reason) > protocol.MaxNameLen || len(c.Message) > protocol.MaxTextLen {
		return errorf(protocol.ErrInvalidArgument, "reason or message too long")
	}
	return checkTime("time", c.Time)
}

func (s *State) applyMarkAgentTasks(index uint64, body []byte) (any, error) {
	var c MarkAgentTasks
	if err := decode(CmdMarkAgentTasks, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("mark agent tasks: %w", err)
	}
	if _, err := s.agent("mark agent tasks", c.AgentID); err != nil {
		return nil, err
	}
	var out []protocol.TaskStatus
	for _, t := range s.cur.TasksByAgent(c.AgentID) {
		if t.Terminal() {
			continue
		}
		state := s.cur.StateFor(t.FrameworkID, c.State)
		if t.State == state {
			continue
		}
		st := generatedStatus(state, c.Reason, c.Message, c.Time)
		out = append(out, s.cur.setStatus(t, st, s.cur.nextUUID(index), c.Time).Status)
	}
	return out, nil
}

// agent returns the agent id or an ErrUnknownAgent error prefixed with op.
func (s *State) agent(op string, id protocol.AgentID) (*Agent, error) {
	if err := checkID("agent_id", id); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	a, ok := s.cur.agents.get(string(id))
	if !ok {
		return nil, errorf(protocol.ErrUnknownAgent, "%s %s", op, id)
	}
	return a, nil
}
