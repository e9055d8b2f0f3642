package offers

import (
	"slices"

	"github.com/allot-project/allot/internal/heapq"
)

// packOrder orders the agents for PlacementPack: least added
// fragmentation for a pending shape first, then the least device room
// left, then the tightest fit (least dominant share of free room left),
// then the order of agentList; agents
// no pending shape fits last. When few units are pending only that many
// best agents are put first, the rest following in agentList's order.
func (a *Allocator) packOrder() []*agent {
	p := &a.pack
	a.refreshWeights()
	pending, ids, units := a.packPending()
	if len(pending) == 0 {
		p.order = append(p.order[:0], a.agentList...)
		return p.order
	}
	st := &p.states
	a.syncStates()
	chosen := p.chosen[:0]
	if len(pending) == 1 && units == 1 {
		if best := a.packBest(ids[0], pending[0]); best >= 0 {
			chosen = append(chosen, int(st.members[best][0]))
		}
		return a.packOrderOf(chosen)
	}
	heap := a.packStateBests(pending, ids)
	if units == 1 {
		if best := st.bestOf(heap); best >= 0 {
			i := st.members[best][0]
			chosen = append(chosen, int(i))
		}
	} else {
		chosen, heap = st.takeBest(heap, chosen, units)
	}
	st.heap = heap
	return a.packOrderOf(chosen)
}

// packPending is the demanding frameworks' shapes with units pending,
// their shape ids, and how many agents those units could take at most.
func (a *Allocator) packPending() (pending []*shape, ids []int, units int64) {
	p := &a.pack
	for _, f := range a.fwByIdx {
		if f == nil || !f.demanding() {
			continue
		}
		for _, s := range f.shapes {
			if n := s.pending(); n > 0 {
				pending = append(pending, s)
				ids = append(ids, p.idOf(s.key))
				// Unlimited, or more than agents: every agent in order.
				units = min(units+min(n, int64(len(a.agentList))), int64(len(a.agentList)))
			}
		}
	}
	return pending, ids, units
}

// packStateBests sets each state's best score over the pending shapes,
// scored once per mix for all its agents, and its next agent to its
// first; it returns the states some shape fits, in st.heap's room.
func (a *Allocator) packStateBests(pending []*shape, ids []int) []int32 {
	p := &a.pack
	st := &p.states
	st.best = reuse(&st.best, len(st.members))
	st.next = reuse(&st.next, len(st.members))
	cols := make([][]stateCell, len(pending))
	for k := range pending {
		cols[k] = st.column(ids[k], len(a.agentList))
	}
	heap := st.heap[:0]
	for sid, m := range st.members {
		if len(m) == 0 || st.drains[sid] {
			continue
		}
		var best *packScore
		for k, s := range pending {
			c := &cols[k][sid]
			if c.gen != st.gen[sid] || c.mixVer != p.mixVer {
				c.sc, c.gen, c.mixVer = a.scoreOn(a.agentList[m[0]], s), st.gen[sid], p.mixVer
			}
			if sc := &c.sc; sc.ok && (best == nil || sc.delta < best.delta || sc.delta == best.delta && sc.tight < best.tight) {
				best = sc
			}
		}
		if best != nil {
			st.best[sid] = best
			heap = append(heap, int32(sid))
		}
	}
	return heap
}

// stateLess orders states x and y by their best scores, then by their
// next agents: each state offers its agents in agentList's order, so the
// states are merged by their next agent.
func (st *packStates) stateLess(x, y int32) bool {
	return packLess(st.best[x], st.best[y], int(st.members[x][st.next[x]]), int(st.members[y][st.next[y]]))
}

// bestOf is the first of the states in heap by stateLess, or -1 if none.
func (st *packStates) bestOf(heap []int32) int32 {
	best := int32(-1)
	for _, sid := range heap {
		if best < 0 || st.stateLess(sid, best) {
			best = sid
		}
	}
	return best
}

// takeBest appends to chosen the next agents of the states in heap, best
// first, until it holds units agents or the states run out; it returns
// chosen and what is left of heap.
func (st *packStates) takeBest(heap []int32, chosen []int, units int64) ([]int, []int32) {
	less := st.stateLess
	heapq.Init(heap, less)
	for int64(len(chosen)) < units && len(heap) > 0 {
		sid := heap[0]
		i := st.members[sid][st.next[sid]]
		chosen = append(chosen, int(i))
		if st.next[sid]++; int(st.next[sid]) == len(st.members[sid]) {
			heap = heapq.Pop(heap, less)
		} else {
			heapq.Fix(heap, 0, less) // its next agent comes later
		}
	}
	return chosen, heap
}

// packOrderOf is the chosen agents (agentList indices) in order, then the
// rest in agentList's order.
func (a *Allocator) packOrderOf(chosen []int) []*agent {
	p := &a.pack
	p.chosen = chosen
	p.order = p.order[:0]
	for _, i := range chosen {
		p.order = append(p.order, a.agentList[i])
	}
	// The rest in agentList's order: the runs between the chosen.
	slices.Sort(chosen)
	from := 0
	for _, i := range chosen {
		p.order = append(p.order, a.agentList[from:i]...)
		from = i + 1
	}
	p.order = append(p.order, a.agentList[from:]...)
	return p.order
}

// packLess orders two agents' scores, at agentList indices i and j.
func packLess(x, y *packScore, i, j int) bool {
	if d := x.delta - y.delta; d < -packTolerance || d > packTolerance {
		return d < 0
	}
	if x.gpuLeft != y.gpuLeft {
		// Work that fragments no more anywhere goes where the fewest
		// devices are left, keeping the room beside free devices for
		// work that needs them.
		return x.gpuLeft < y.gpuLeft
	}
	return x.tight < y.tight || x.tight == y.tight && i < j
}
