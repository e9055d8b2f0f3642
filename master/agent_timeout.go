package master

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// checkAgents marks agents that missed their heartbeats unreachable,
// unless more of them did than Config.AgentRemovalLimit allows. Agents
// that fell silent together do not all cross the timeout at the same
// check (their heartbeats had different phases), so the limit counts
// every agent silent for half the timeout: the first of them to be late
// does not go alone.
//
// A new leader counts an agent's silence from where its predecessor
// recorded it (agent_silence.go), but marks none before it has itself
// given every agent silentAfter to be heard: an agent whose heartbeats
// were late when the old leader died (a loaded machine) must also
// reconnect, if its NATS server died with that leader, and find the new
// one. Elections more often than that would keep a gone agent from being
// marked, as they would in Mesos (whose agents get ten minutes to
// reregister after a failover); silentAfter is at most half the timeout.
//
// It returns how long until the next agent heard from would cross the
// timeout, so that the leader looks again then rather than up to a
// heartbeat later: a lost agent's tasks are reported lost, and replaced,
// as soon as the timeout allows.
func (l *leader) checkAgents(now time.Time) (next time.Duration) {
	pace := l.timeoutPace()
	timeout := l.cfg.agentTimeout(pace)
	grace := l.since.Add(l.cfg.silentAfter(pace)).Sub(now)
	next = timeout
	l.mu.Lock()
	var late []protocol.AgentID
	silent := 0
	for id, seen := range l.lastSeen {
		quiet := now.Sub(seen)
		if quiet > timeout && grace < 0 {
			late = append(late, id)
			continue
		}
		if quiet > timeout/2 {
			silent++
		}
		next = min(next, max(timeout-quiet, grace))
	}
	silent += len(late)
	tracked := len(l.lastSeen)
	l.mu.Unlock()
	// Just past the deadline (the timeout is crossed, not reached), and
	// not so soon that agents whose deadlines crowd together make a check
	// after every one.
	next = max(next+time.Millisecond, l.cfg.AllocationInterval/4)
	if len(late) > 0 && tooManyLate(silent, tracked, l.cfg.AgentRemovalLimit) {
		if !l.removalHeld {
			l.logger.Error("agents missed their heartbeats all at once, beyond the agent removal limit: none is marked unreachable until fewer are late (is this master cut off from them?)",
				"late", len(late), "agents", tracked, "limit", l.cfg.AgentRemovalLimit)
		}
		l.removalHeld = true
		l.metrics.removalHeld(true)
		return next
	}
	if l.removalHeld {
		l.logger.Info("agent removals resume", "late", len(late), "agents", tracked)
		l.removalHeld = false
		l.metrics.removalHeld(false)
	}
	for _, id := range late {
		if err := l.agentUnreachable(id, now); err != nil {
			l.logger.Warn("could not mark agent unreachable", "agent_id", id, "error", err)
		}
	}
	return next
}

// tooManyLate reports whether late of tracked agents exceed the removal
// limit (0 or 1: none does).
func tooManyLate(late, tracked int, limit float64) bool {
	return limit > 0 && limit < 1 && late > 0 && float64(late) > limit*float64(tracked)
}
