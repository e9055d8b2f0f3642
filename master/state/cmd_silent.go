package state

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// MarkAgentsSilent records when the leader last heard from agents that
// have gone quiet, and clears the mark of those it heard from again, so
// that a new leader goes on counting an agent's silence where its
// predecessor stopped instead of from its own election (the leader's
// record of heartbeats is not replicated). Silent sets Agent.SilentSince
// for each agent named; Heard clears it. Agents unknown by now are
// skipped: the mark may race with a removal. A State that does not know
// the command skips it (the leader sends it with IgnoreUnknownFlag).
// Apply result: the number of agents changed.
type MarkAgentsSilent struct {
	Silent []AgentSilence     `msgpack:"silent,omitempty"`
	Heard  []protocol.AgentID `msgpack:"heard,omitempty"`
	Time   int64              `msgpack:"time"`
}

// AgentSilence is an agent and when the leader last heard from it, Unix
// nanoseconds.
type AgentSilence struct {
	AgentID protocol.AgentID `msgpack:"ag"`
	Since   int64            `msgpack:"since"`
}

func (c *MarkAgentsSilent) validate() error {
	if n := len(c.Silent) + len(c.Heard); n == 0 || n > protocol.MaxListLen {
		return errorf(protocol.ErrInvalidArgument, "%d agents, want 1 to %d", n, protocol.MaxListLen)
	}
	for i, s := range c.Silent {
		if err := checkID("agent_id", s.AgentID); err != nil {
			return fmt.Errorf("silent[%d]: %w", i, err)
		}
		if err := checkTime("since", s.Since); err != nil {
			return fmt.Errorf("silent[%d]: %w", i, err)
		}
		if s.Since > c.Time {
			return errorf(protocol.ErrInvalidArgument, "silent[%d]: since %d is after the command's time %d", i, s.Since, c.Time)
		}
	}
	for i, id := range c.Heard {
		if err := checkID("agent_id", id); err != nil {
			return fmt.Errorf("heard[%d]: %w", i, err)
		}
	}
	return checkTime("time", c.Time)
}

func (s *State) applyMarkAgentsSilent(_ uint64, body []byte) (any, error) {
	var c MarkAgentsSilent
	if err := decode(CmdMarkAgentsSilent, body, &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("mark agents silent: %w", err)
	}
	changed := 0
	set := func(id protocol.AgentID, since int64) {
		old, ok := s.cur.agents.get(string(id))
		if !ok || old.SilentSince == since {
			return
		}
		a := *old
		a.SilentSince = since
		s.cur.agents = s.cur.agents.set(string(a.ID), &a)
		changed++
	}
	for _, x := range c.Silent {
		set(x.AgentID, x.Since)
	}
	for _, id := range c.Heard {
		set(id, 0)
	}
	return changed, nil
}
