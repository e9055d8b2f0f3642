package offers

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// SetDraining marks an agent draining (true) or active again (false), as
// Nomad's node drain and Mesos's DRAIN_AGENT do. A draining agent keeps its
// capacity and what runs on it (so frameworks' usage and shares do not
// move), but its resources are offered to nobody: its outstanding offers
// are rescinded and allocation rounds skip it, so its tasks can finish
// before the agent is taken down. Its free resources leave the available
// set Y meanwhile, since no pending task can get them.
func (a *Allocator) SetDraining(id protocol.AgentID, draining bool) ([]Rescind, error) {
	ag, ok := a.agents[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownAgent, id)
	}
	if ag.draining == draining {
		return nil, nil
	}
	var out []Rescind
	if draining {
		for _, o := range ag.offers.sorted() {
			out = append(out, a.rescind(o, "agent draining"))
		}
		a.avail.agentRemoved(ag)
	} else {
		a.avail.agentAdded(ag)
	}
	ag.draining = draining
	a.packTouched(ag)
	a.ver++
	a.changed()
	return out, nil
}

// Draining reports whether an agent is draining.
func (a *Allocator) Draining(id protocol.AgentID) bool {
	ag, ok := a.agents[id]
	return ok && ag.draining
}
