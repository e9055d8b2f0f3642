package master

import (
	"testing"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// TestCheckAgents_newLeaderGivesAgentsSilentAfter: a new leader counts an
// agent's silence from its predecessor's record, yet marks it unreachable
// only once it has itself given it silentAfter to be heard; then at once.
func TestCheckAgents_newLeaderGivesAgentsSilentAfter(t *testing.T) {
	m, nc := apiTestMaster(t, func(c *Config) {
		c.AgentHeartbeat, c.AgentTimeout = time.Second, 4*time.Second
	})
	var reg protocol.RegisterReply
	httpTestRequest(t, nc, viaBody, protocol.MsgRegisterRequest, protocol.RegisterRequest{
		Hostname: "host-0", Addresses: protocol.Addresses{HTTP: "127.0.0.1:5051"},
		Resources: protocol.Scalars(map[string]int64{"cpus": 1000, "mem": 1000}),
	}, &reg)
	l := leaderOf(t, m)
	took := time.Now()
	after := l.cfg.silentAfter(l.timeoutPace())
	l.mu.Lock()
	// As rebuild leaves an agent whose predecessor recorded it silent
	// long ago, at a takeover now.
	l.since = took
	l.lastSeen[reg.AgentID] = took.Add(-time.Hour)
	l.mu.Unlock()

	stateOf := func() state.AgentState {
		a, ok := m.View().Agent(reg.AgentID)
		if !ok {
			t.Fatalf("agent %s unknown", reg.AgentID)
		}
		return a.State
	}
	if next := l.checkAgents(took.Add(after / 2)); next < after/2-time.Millisecond || next > after/2+time.Millisecond {
		t.Errorf("next check %v after half the grace, want the rest of it (%v)", next, after/2)
	}
	if got := stateOf(); got != state.AgentActive {
		t.Fatalf("agent silent an hour, half the new leader's grace (%v) in: %s, want %s", after, got, state.AgentActive)
	}
	l.checkAgents(took.Add(after + time.Millisecond))
	if got := stateOf(); got != state.AgentUnreachable {
		t.Fatalf("agent silent an hour, past the grace: %s, want %s", got, state.AgentUnreachable)
	}
}
