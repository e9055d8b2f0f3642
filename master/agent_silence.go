package master

import (
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// The leader's record of agents' heartbeats (lastSeen) is its own, so each
// new leader used to start every agent's timeout afresh: with elections
// coming faster than the agent timeout, an agent gone for good was never
// marked unreachable. The leader therefore replicates, for each agent
// quiet for silentAfter, when it last heard from it (state.MarkAgentsSilent,
// Agent.SilentSince), and clears the mark once it hears from it again; a
// new leader counts an agent's silence from the mark (rebuild). Marks
// change only when agents fall quiet or come back, so a healthy cluster
// writes none.

// markSilence replicates the changes in which agents are quiet: newly
// quiet ones with when they were last heard, and the end of the silence
// of those heard again.
func (l *leader) markSilence(now time.Time) {
	after := l.cfg.silentAfter(l.timeoutPace())
	cmd := state.MarkAgentsSilent{Time: now.UnixNano()}
	v := l.view()
	l.mu.Lock()
	for id, seen := range l.lastSeen {
		if len(cmd.Silent)+len(cmd.Heard) >= protocol.MaxListLen {
			break // the rest at the next check
		}
		a, ok := v.Agent(id)
		if !ok {
			continue
		}
		quiet, marked := now.Sub(seen) > after, a.SilentSince != 0
		switch {
		case quiet && !marked:
			cmd.Silent = append(cmd.Silent, state.AgentSilence{AgentID: id, Since: seen.UnixNano()})
		case !quiet && marked:
			cmd.Heard = append(cmd.Heard, id)
		}
	}
	l.mu.Unlock()
	if len(cmd.Silent)+len(cmd.Heard) == 0 {
		return
	}
	ctx, cancel := l.timed()
	defer cancel()
	// Flagged, so that a master of an earlier version skips it during a
	// rolling upgrade.
	if _, err := l.apply(ctx, state.CmdMarkAgentsSilent|state.IgnoreUnknownFlag, cmd); err != nil {
		l.logger.Warn("could not record agents' silence", "silent", len(cmd.Silent), "heard", len(cmd.Heard), "error", err)
		return
	}
	l.logger.Debug("agents' silence recorded", "silent", len(cmd.Silent), "heard", len(cmd.Heard))
}

// seenAt is when a new leader counts an agent's silence from: the silence
// its predecessors recorded, or now.
func seenAt(a *state.Agent, now time.Time) time.Time {
	if a.SilentSince > 0 && a.SilentSince < now.UnixNano() {
		return time.Unix(0, a.SilentSince)
	}
	return now
}
