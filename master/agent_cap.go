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

// registeredAlready finds the agent a repeated registration registered:
// one of the same credential and hostname, with the same resources, that
// has not heartbeated yet. An agent whose first attempt committed but
// whose answer was lost (a slow or failing leader) tries again; without
// this, a capped credential would refuse it for the agent it already
// holds, and an uncapped one would register a second agent that never
// heartbeats.
func (l *leader) registeredAlready(principal string, r *protocol.RegisterRequest) (protocol.AgentID, bool) {
	if principal == "" {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.credentials.held[principal] {
		if info, ok := l.joining[id]; ok && info.Hostname == r.Hostname && info.Total.Equal(r.Resources) {
			return id, true
		}
	}
	return "", false
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
	held, pending := len(l.credentials.held[principal]), l.credentials.pending[principal]
	switch {
	case held >= limit:
		return nil, fmt.Errorf("%w: agent credential %q already holds %d registered agents (at most %d)",
			protocol.ErrLimitExceeded, principal, held, limit)
	case held+pending >= limit:
		// Possibly this very agent's earlier attempt, still being
		// committed: once it is, a new attempt gets its ID.
		return nil, fmt.Errorf("%w: a registration of agent credential %q is being committed; try again",
			protocol.ErrUnavailable, principal)
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
