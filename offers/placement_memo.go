package offers

import (
	"fmt"
	"hash/maphash"
	"math"
)

// Many agents are in the same state: idle hosts of one kind, or hosts
// running the same few tasks. A shape's packing score depends only on an
// agent's state (its free room, its devices, its attributes) and on the
// mix, so scores are shared between agents by a hash of that state
// (packAgent.state), until the mix is weighed again. A collision of the
// 64-bit hashes would only misorder an agent: every placement is still
// checked against the agent's own room.

// scoreKey names a score: an agent state's hash and a pending shape's id.
type scoreKey struct {
	state uint64
	id    int
}

// packMemoMax bounds the shared scores kept; past it they start afresh.
const packMemoMax = 1 << 16

var packSeed = maphash.MakeSeed()

// stateOf is the hash of ag's state for shared scores, brought up to date.
func (a *Allocator) stateOf(ag *agent, pa *packAgent) uint64 {
	if pa.stateVer == ag.ver+1 && pa.stateSerial == ag.serial {
		return pa.state
	}
	var h maphash.Hash
	h.SetSeed(packSeed)
	var buf [8]byte
	put := func(x uint64) {
		for i := range buf {
			buf[i] = byte(x >> (8 * i))
		}
		_, _ = h.Write(buf[:])
	}
	if pa.attrSerial != ag.serial {
		pa.attrSerial = ag.serial
		pa.attrs = maphash.String(packSeed, fmt.Sprint(ag.info.Attributes))
	}
	put(pa.attrs)
	put(uint64(len(ag.free)))
	for _, x := range ag.free {
		put(uint64(x))
	}
	put(math.MaxUint64)
	for _, j := range ag.gpuDims {
		put(uint64(j))
	}
	if ag.draining {
		put(1)
	}
	pa.state, pa.stateVer, pa.stateSerial = h.Sum64(), ag.ver+1, ag.serial
	return pa.state
}

// sharedScore is s's score on ag (shape id), from an agent in the same
// state if one was scored since the mix was last weighed.
func (a *Allocator) sharedScore(ag *agent, s *shape, id int) packScore {
	p := &a.pack
	pa := a.packAgentOf(ag)
	if p.memoVer != p.mixVer || len(p.memo) > packMemoMax {
		clear(p.memo)
		p.memoVer = p.mixVer
	}
	if p.memo == nil {
		p.memo = map[scoreKey]packScore{}
	}
	key := scoreKey{a.stateOf(ag, pa), id}
	sc, ok := p.memo[key]
	if !ok {
		sc = a.scoreOn(ag, s)
		p.memo[key] = sc
	}
	sc.agVer, sc.mixVer = ag.ver+1, p.mixVer
	return sc
}
