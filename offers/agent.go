package offers

import (
	"github.com/allot-project/allot/protocol"
)

// AgentInfo describes an agent to the allocator.
type AgentInfo struct {
	ID         protocol.AgentID
	Hostname   string
	Total      protocol.Resources
	Attributes protocol.Attributes
}

// usage is what one framework runs on one agent.
type usage struct {
	res   vec
	ports protocol.Ranges
}

// agent is one agent's capacity, free resources and per-framework usage.
type agent struct {
	id    protocol.AgentID
	idx   int
	info  AgentInfo
	total vec
	free  vec

	totalPorts protocol.Ranges
	freePorts  protocol.Ranges
	// serial is the allocator's freeSeq when the agent joined: it names
	// this agent among all that ever held its place in agentList.
	serial uint64
	// ver is the allocator's freeSeq at the last change of free, for
	// placement_pack.go's caches.
	ver uint64
	// gpuDims are the dimensions of the agent's GPU devices, by device
	// index (devices.go).
	gpuDims []int

	usage  map[*framework]*usage
	offers offerSet
	// offered is the protocol form of what the agent offered last
	// (book.go).
	offered offeredForm

	// classes are the constraint classes this agent satisfies (crv.go).
	classes []*crvClass
	// crvGroup is the agents with the same classes (nil: to be found
	// again, crvround.go).
	crvGroup *crvGroup

	// Decline filters: bit i set means framework index i is refused here
	// as filters[i] says.
	filtered []uint64
	filters  map[int]filter

	// draining agents are offered to nobody (drain.go).
	draining bool
}

func (a *agent) isFiltered(fwIdx int) bool {
	w := fwIdx >> 6
	return w < len(a.filtered) && a.filtered[w]&(1<<(uint(fwIdx)&63)) != 0
}

func (a *agent) setFilter(fwIdx int, fl filter) {
	w := fwIdx >> 6
	for len(a.filtered) <= w {
		a.filtered = append(a.filtered, 0)
	}
	a.filtered[w] |= 1 << (uint(fwIdx) & 63)
	if a.filters == nil {
		a.filters = map[int]filter{}
	}
	a.filters[fwIdx] = fl
}

func (a *agent) clearFilter(fwIdx int) {
	w := fwIdx >> 6
	if w < len(a.filtered) {
		a.filtered[w] &^= 1 << (uint(fwIdx) & 63)
	}
	delete(a.filters, fwIdx)
}
