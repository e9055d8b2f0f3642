package state

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// ReregisterAgent re-attaches a known agent (after an agent restart, a
// partition or a master failover) with its current description and the
// latest statuses of the tasks it runs, and reconciles those with the
// task table. An unreachable agent becomes active again; a draining one
// stays draining; a gone one is refused (ErrAgentGone).
//
// Reconciliation, task by task:
//
//   - A task the master has on this agent and the agent reports: when
//     the master's task is not terminal and the reported state differs,
//     the reported status becomes the latest, unacknowledged (under the
//     reported UUID, or a generated one when it has none), unless it is
//     behind the master's (STARTING reported for a task the master has
//     RUNNING: the agent reports its oldest unacknowledged update, which
//     the master may have committed, and a later one, before the
//     acknowledgements were lost). A reported DROPPED becomes LOST
//     for a framework that is not partition aware. When the
//     master's task is terminal (e.g. LOST after the agent was
//     unreachable) and the agent reports it running, the report is an
//     orphan: terminal states are final, so the leader must kill it.
//   - A task the master has on this agent, not terminal, that the agent
//     does not report: it becomes LOST with ReasonAgentRestarted. One
//     still STAGING is left as it is and listed in Relaunch: its launch
//     may have been in flight to the agent when the agent built its
//     report, or lost with a leader, so the leader sends it again
//     (agents ignore a launch of a task they already have).
//   - A non-terminal task the agent reports that the master does not have
//     on this agent (unknown framework, unknown task, or a task of that ID
//     on another agent): an orphan. It is never adopted: every launch is
//     committed before it is sent, so a task the master does not know is
//     one it already gave up on (lost, acknowledged and removed) and may
//     have replaced; running it again could run it twice.
//
// Apply result: ReregisterResult. Errors: ErrUnknownAgent, ErrAgentGone,
// ErrDuplicate (a task reported twice), ErrInvalidArgument.
type ReregisterAgent struct {
	AgentID protocol.AgentID `msgpack:"ag"`
	// Principal is the credential the agent reregisters with; it must be
	// the one it registered with (ErrUnauthorized otherwise).
	Principal  string              `msgpack:"principal,omitempty"`
	Hostname   string              `msgpack:"host"`
	HTTPAddr   string              `msgpack:"http,omitempty"`
	Resources  protocol.Resources  `msgpack:"res"`
	Attributes protocol.Attributes `msgpack:"attrs,omitempty"`
	Version    string              `msgpack:"ver,omitempty"`
	// Tasks are the latest statuses of the agent's tasks; each names this
	// agent or none.
	Tasks []protocol.TaskStatus `msgpack:"tasks,omitempty"`
	Time  int64                 `msgpack:"time"`
}

// ReregisterResult is the outcome of ReregisterAgent.
type ReregisterResult struct {
	Agent *Agent
	// Changed are the tasks' new latest statuses, to send to their
	// frameworks, sorted by task key.
	Changed []protocol.TaskStatus
	// Orphans are reported tasks the agent must kill, as reported (with
	// AgentID set), sorted by task key.
	Orphans []protocol.TaskStatus
	// Relaunch are the agent's STAGING tasks it did not report, sorted by
	// task key: the leader sends their launches again.
	Relaunch []*Task
}

func (c *ReregisterAgent) validate() error {
	req := protocol.ReregisterRequest{
		AgentID: c.AgentID, Hostname: c.Hostname, Addresses: protocol.Addresses{HTTP: c.HTTPAddr},
		Resources: c.Resources, Attributes: c.Attributes, Version: c.Version, Tasks: c.Tasks,
	}
	if err := req.Validate(); err != nil {
		return err
	}
	for i, t := range c.Tasks {
		if t.AgentID != "" && t.AgentID != c.AgentID {
			return errorf(protocol.ErrInvalidArgument, "tasks[%d] names agent %s", i, t.AgentID)
		}
	}
	return checkTime("time", c.Time)
}

func (s *State) applyReregisterAgent(index uint64, body []byte) (any, error) {
	var c ReregisterAgent
	if err := decode(CmdReregisterAgent, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("reregister agent: %w", err)
	}
	old, err := s.agent("reregister agent", c.AgentID)
	if err != nil {
		return nil, err
	}
	if old.State == AgentGone {
		return nil, fmt.Errorf("reregister agent %s: %w", c.AgentID, ErrAgentGone)
	}
	if old.Principal != c.Principal {
		return nil, errorf(protocol.ErrUnauthorized, "reregister agent %s: principal %q, registered as %q",
			c.AgentID, clip(c.Principal), old.Principal)
	}
	reported := make(map[string]protocol.TaskStatus, len(c.Tasks))
	for _, t := range c.Tasks {
		k := taskKey(t.FrameworkID, t.TaskID)
		if _, dup := reported[k]; dup {
			return nil, errorf(protocol.ErrDuplicate, "reregister agent %s: task %s/%s reported twice",
				c.AgentID, t.FrameworkID, t.TaskID)
		}
		t.AgentID = c.AgentID
		reported[k] = t
	}

	a := *old
	a.Hostname, a.HTTPAddr, a.Resources, a.Attributes, a.Version = c.Hostname, c.HTTPAddr, c.Resources, c.Attributes, c.Version
	if a.State == AgentUnreachable {
		a.State, a.UnreachableAt = AgentActive, 0
	}
	a.UpdatedAt, a.SilentSince = c.Time, 0
	s.cur.agents = s.cur.agents.set(string(a.ID), &a)

	res := ReregisterResult{Agent: &a}
	for _, t := range s.cur.TasksByAgent(c.AgentID) {
		k := taskKey(t.FrameworkID, t.ID)
		r, ok := reported[k]
		delete(reported, k)
		switch {
		case ok && t.Terminal():
			if !r.State.Terminal() {
				res.Orphans = append(res.Orphans, r)
			}
		case ok:
			if r.State == t.State || r.UUID != "" && r.UUID == t.StatusUUID || behind(r.State, t.State) {
				continue
			}
			uuid := r.UUID
			if uuid == "" {
				uuid = s.cur.nextUUID(index)
			}
			if r.State == protocol.TaskDropped {
				r.State = s.cur.StateFor(t.FrameworkID, r.State)
			}
			res.Changed = append(res.Changed, s.cur.setStatus(t, r, uuid, c.Time).Status)
		case t.State == protocol.TaskStaging:
			res.Relaunch = append(res.Relaunch, t)
		case !t.Terminal():
			st := generatedStatus(protocol.TaskLost, protocol.ReasonAgentRestarted,
				"agent reregistered without the task", c.Time)
			res.Changed = append(res.Changed, s.cur.setStatus(t, st, s.cur.nextUUID(index), c.Time).Status)
		}
	}
	// What is left was not on this agent in the master's table.
	for _, r := range reported {
		if !r.State.Terminal() {
			res.Orphans = append(res.Orphans, r)
		}
	}
	slices.SortFunc(res.Orphans, func(x, y protocol.TaskStatus) int {
		return cmp.Or(cmp.Compare(x.FrameworkID, y.FrameworkID), cmp.Compare(x.TaskID, y.TaskID))
	})
	return res, nil
}

// behind reports whether reported, a live state, comes before current in
// the lifecycle STAGING, STARTING, RUNNING, KILLING. UNREACHABLE, which
// the master sets, never counts as ahead of what the agent reports.
func behind(reported, current protocol.TaskState) bool {
	rank := map[protocol.TaskState]int{
		protocol.TaskStaging: 1, protocol.TaskStarting: 2, protocol.TaskRunning: 3, protocol.TaskKilling: 4,
	}
	r, rok := rank[reported]
	c, cok := rank[current]
	return rok && cok && r < c
}
