package master

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// credentialAgents caps the agents one credential may hold registered at
// once (Config.MaxAgentsPerCredential), so that a stolen agent credential
// cannot fill the replicated state with fake agents. An agent holds a place
// while the leader tracks it (active or draining) and while its
// registration is being committed. Guarded by leader.mu.
type credentialAgents struct {
	held    map[string]map[protocol.AgentID]bool // principal → agents
	pending map[string]int                       // principal → registrations in flight
}

func newCredentialAgents() credentialAgents {
	return credentialAgents{held: map[string]map[protocol.AgentID]bool{}, pending: map[string]int{}}
}

func (c *credentialAgents) add(principal string, id protocol.AgentID) {
	if principal == "" {
		return
	}
	if c.held[principal] == nil {
		c.held[principal] = map[protocol.AgentID]bool{}
	}
	c.held[principal][id] = true
}

func (c *credentialAgents) remove(principal string, id protocol.AgentID) {
	delete(c.held[principal], id)
	if len(c.held[principal]) == 0 {
		delete(c.held, principal)
	}
}

// reserveAgent takes a place for a new agent of principal, or refuses with
// ErrLimitExceeded when the credential holds its cap already. Agents of a
// cluster that authenticates none are not capped. release gives the place
// back when the registration failed.
func (l *leader) reserveAgent(principal string) (release func(), err error) {
	limit := l.cfg.MaxAgentsPerCredential
	if principal == "" || limit <= 0 {
		return func() {}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.credentials.held[principal]) + l.credentials.pending[principal]; n >= limit {
		return nil, fmt.Errorf("%w: agent credential %q already holds %d registered agents (at most %d)",
			protocol.ErrLimitExceeded, principal, n, limit)
	}
	l.credentials.pending[principal]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.credentials.pending[principal]--; l.credentials.pending[principal] <= 0 {
			delete(l.credentials.pending, principal)
		}
	}, nil
}
