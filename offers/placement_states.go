package offers

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
)

// Many agents are in the same state: idle hosts of one kind, or hosts
// running the same few tasks. A shape's packing score depends only on an
// agent's state (its free room, its devices, its attributes, whether it
// drains) and on the mix, so packing groups the agents by a hash of their
// state (packStates), scores each state once per shape until the mix is
// weighed again, and picks among states rather than agents. A collision
// of the 64-bit hashes would only misorder an agent: every placement is
// still checked against the agent's own room.

// packStates groups the agents by state. Ids of states no agent is in
// any more are used again, gen telling the uses apart.
type packStates struct {
	byHash  map[uint64]int32
	hash    []uint64  // by state id
	members [][]int32 // by state id: agent indices, ascending
	gen     []uint32  // by state id
	drains  []bool    // by state id: its agents drain
	unused  []int32   // state ids without members
	of      []int32   // by agent index: its state id
	// touched lists the agents whose state may have changed since the
	// last sync; stale asks for every agent to be placed again.
	touched []int32
	stale   bool
	// cells holds the scores by shape id, then state id.
	cells [][]stateCell
	// log lists the states changed, from position logBase on; epoch
	// counts the times every agent was placed again (placement_tree.go).
	log     []int32
	logBase uint64
	epoch   uint64
	trees   []packTree
	// treeNodes is packBest's scratch.
	treeNodes []int32
	// best, next and heap are packOrder's scratch, by state id.
	best []*packScore
	next []int32
	heap []int32
}

// stateCell is a shape's score in a state, for the state id's use gen
// and the mix version mixVer.
type stateCell struct {
	sc     packScore
	gen    uint32
	mixVer uint64
}

var packSeed = maphash.MakeSeed()

// packTouched notes that ag's state may have changed.
func (a *Allocator) packTouched(ag *agent) {
	st := &a.pack.states
	if a.cfg.Placement != PlacementPack || st.stale {
		return
	}
	if len(st.touched) > len(a.agentList) {
		st.stale, st.touched = true, st.touched[:0]
		return
	}
	st.touched = append(st.touched, int32(ag.idx))
}

// packMoved notes that agents changed places in agentList.
func (a *Allocator) packMoved() { a.pack.states.stale = true }

// stateHash hashes ag's state.
func (a *Allocator) stateHash(ag *agent, pa *packAgent) uint64 {
	h := mix64(attrsOf(ag, pa) ^ uint64(len(ag.free)))
	for _, x := range ag.free {
		h = mix64(h ^ uint64(x))
	}
	h = mix64(h ^ math.MaxUint64)
	for _, j := range ag.gpuDims {
		h = mix64(h ^ uint64(j))
	}
	if ag.draining {
		h = mix64(h ^ 1)
	}
	return h
}

// attrsOf hashes ag's attributes, which decide every constraint.
func attrsOf(ag *agent, pa *packAgent) uint64 {
	if pa.attrSerial != ag.serial {
		pa.attrSerial = ag.serial
		pa.attrs = maphash.String(packSeed, fmt.Sprint(ag.info.Attributes))
	}
	return pa.attrs
}

// mix64 is splitmix64's finalizer: every bit of x moves about half the
// bits of the result.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// syncStates brings the agents' states up to date.
func (a *Allocator) syncStates() {
	st := &a.pack.states
	if st.byHash == nil {
		st.byHash = map[uint64]int32{}
	}
	if st.stale || len(st.of) != len(a.agentList) {
		st.stale, st.touched = false, st.touched[:0]
		st.epoch++
		clear(st.byHash)
		st.unused = st.unused[:0]
		for id := range st.members {
			st.members[id] = st.members[id][:0]
			st.gen[id]++
			st.unused = append(st.unused, int32(id))
		}
		slices.Reverse(st.unused)
		st.of = st.of[:0]
		for i, ag := range a.agentList {
			st.of = append(st.of, -1)
			a.placeState(i, a.stateHash(ag, a.packAgentOf(ag)))
		}
		return
	}
	for _, i := range st.touched {
		ag := a.agentList[i]
		h := a.stateHash(ag, a.packAgentOf(ag))
		if id := st.of[i]; id >= 0 && st.hash[id] == h {
			continue
		}
		a.leaveState(int(i))
		a.placeState(int(i), h)
	}
	st.touched = st.touched[:0]
}

// placeState puts agent i in the state of hash h.
func (a *Allocator) placeState(i int, h uint64) {
	st := &a.pack.states
	id, ok := st.byHash[h]
	if !ok {
		if n := len(st.unused); n > 0 {
			id, st.unused = st.unused[n-1], st.unused[:n-1]
		} else {
			id = int32(len(st.members))
			st.members = append(st.members, nil)
			st.hash = append(st.hash, 0)
			st.gen = append(st.gen, 0)
			st.drains = append(st.drains, false)
		}
		st.hash[id] = h
		st.drains[id] = a.agentList[i].draining
		st.byHash[h] = id
	}
	m := st.members[id]
	k, _ := slices.BinarySearch(m, int32(i))
	st.members[id] = slices.Insert(m, k, int32(i))
	st.of[i] = id
	st.logChange(id)
}

// leaveState takes agent i out of its state.
func (a *Allocator) leaveState(i int) {
	st := &a.pack.states
	id := st.of[i]
	if id < 0 {
		return
	}
	st.of[i] = -1
	m := st.members[id]
	if k, ok := slices.BinarySearch(m, int32(i)); ok {
		m = slices.Delete(m, k, k+1)
	}
	st.members[id] = m
	st.logChange(id)
	if len(m) == 0 {
		delete(st.byHash, st.hash[id])
		st.gen[id]++
		st.unused = append(st.unused, id)
	}
}

// column is shape id's cells, one for every state id. There are never
// more states than agents (ids are used again), so a column is made room
// for that many once: growing hundreds of columns with the states cost
// more than scoring.
func (st *packStates) column(id, agents int) []stateCell {
	for len(st.cells) <= id {
		st.cells = append(st.cells, nil)
	}
	col := st.cells[id]
	if n := len(st.members); len(col) < n {
		old := len(col)
		col = slices.Grow(col, max(n, agents)-old)[:n]
		clear(col[old:])
		st.cells[id] = col
	}
	return col
}
