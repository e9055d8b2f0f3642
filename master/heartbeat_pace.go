package master

import "time"

// Heartbeats cost the leader a request each. At one a second, 10,000
// agents send 10,000 requests a second, and every framework call waits
// behind them (docs/benchmarks.md, "Scale"). So, as Nomad's servers do
// with max_heartbeats_per_second, the leader asks each agent for a
// heartbeat only as often as Config.MaxHeartbeatsPerSecond allows for the
// agents it tracks: the interval is AgentHeartbeat until the agents
// outnumber the rate, and grows with them after that. The agent timeout
// grows with it, to at least three intervals, so that a slower heartbeat
// is never taken for a lost agent.

// heartbeatInterval is the interval asked of each of agents agents: at
// least AgentHeartbeat, and long enough that they send no more than
// MaxHeartbeatsPerSecond together, rounded up to whole seconds (so that
// the interval changes seldom as agents come and go).
func (c Config) heartbeatInterval(agents int) time.Duration {
	if c.MaxHeartbeatsPerSecond <= 0 {
		return c.AgentHeartbeat
	}
	need := time.Duration(float64(agents) / c.MaxHeartbeatsPerSecond * float64(time.Second))
	if need <= c.AgentHeartbeat {
		return c.AgentHeartbeat
	}
	if r := need % time.Second; r > 0 {
		need += time.Second - r
	}
	return need
}

// agentTimeout is how long an agent heartbeating every interval may stay
// silent before it is marked unreachable: AgentTimeout, or three
// intervals if that is longer.
func (c Config) agentTimeout(interval time.Duration) time.Duration {
	return max(c.AgentTimeout, 3*interval)
}

// silentAfter is how long an agent must be quiet before its silence is
// replicated: two heartbeats, so that an agent whose heartbeat is merely
// late is not marked, and well within the agent timeout, so that a leader
// that lives a few heartbeats records what it saw.
func (c Config) silentAfter(interval time.Duration) time.Duration {
	return min(2*interval, c.agentTimeout(interval)/2)
}

// paceLocked is the heartbeat interval to ask of agents now, for the
// agents the leader tracks, and records the longest asked for this term:
// the agents' timeouts follow that one, since an agent keeps the interval
// it was given until its next heartbeat. l.mu must be held.
func (l *leader) paceLocked() time.Duration {
	every := l.cfg.heartbeatInterval(len(l.lastSeen))
	l.longestPace = max(l.longestPace, every)
	return every
}

// pace is paceLocked for callers that do not hold l.mu.
func (l *leader) pace() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paceLocked()
}

// timeoutPace is the interval the agents' timeouts are counted in: the
// longest asked for this term, now included.
func (l *leader) timeoutPace() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paceLocked()
	return l.longestPace
}

// announceDue reports whether the periodic leader announcement, last made
// at last, is due at now, on a check every tick: once a heartbeat interval.
// Every agent receives each announcement, so at one a second 10,000 agents
// would take 10,000 deliveries a second, five times the heartbeats they
// are asked for; paced so, they take no more than those.
func announceDue(last, now time.Time, interval, tick time.Duration) bool {
	return now.Sub(last) >= interval-tick/2
}
