package offers

import (
	"slices"

	"github.com/allot-project/allot/protocol"
)

// fragOf is the mix's weighted fragmentation of ag with free: for each
// shape of the mix, all the free device room if the shape cannot run
// there, else the room of the devices too small for it.
func (a *Allocator) fragOf(ag *agent, pa *packAgent, free vec) float64 {
	if len(ag.gpuDims) == 0 {
		return 0
	}
	p := &a.pack
	var all, maxFree, whole int64
	for _, j := range ag.gpuDims {
		x := free.at(j)
		all += x
		maxFree = max(maxFree, x)
		if x >= protocol.DeviceMilli {
			whole++
		}
	}
	if all == 0 {
		return 0
	}
	// The devices' free room ascending, and below[m] the sum of the m
	// smallest, answer each need without reading every device again.
	rooms, below := p.rooms[:0], p.below[:0]
	for _, j := range ag.gpuDims {
		rooms = append(rooms, free.at(j))
	}
	slices.Sort(rooms)
	below = append(below, 0)
	for _, x := range rooms {
		below = append(below, below[len(below)-1]+x)
	}
	p.rooms, p.below = rooms, below
	smaller := func(limit int64) int64 {
		m := 0
		for m < len(rooms) && rooms[m] < limit {
			m++
		}
		return below[m]
	}
	// small[k] is the room of the devices too small for the mix's k-th
	// distinct device need; fill[k], for a share, how many tasks of it
	// would take more than all the room.
	small, fill := p.small[:0], p.fill[:0]
	for _, g := range p.needs {
		var x, n int64
		switch {
		case g.share > 0:
			x, n = smaller(g.share), all/g.share+1
		case g.whole > 0:
			x = smaller(protocol.DeviceMilli)
		}
		small, fill = append(small, x), append(fill, n)
	}
	p.small, p.fill = small, fill
	fc, fm := free.at(p.jc), free.at(p.jm)
	// The shapes the agent's attributes rule out lose all of it.
	f := pa.class.wOut * float64(all)
	for i := range pa.class.cols {
		m := &pa.class.cols[i]
		lost := all
		if m.cpu <= fc && m.mem <= fm && (m.share == 0 || maxFree >= m.share) && whole >= m.whole &&
			(m.rest == nil || free.fits(m.rest)) {
			lost = small[m.need]
			if m.share > 0 {
				// Tasks of a share use no more of the devices than the
				// CPUs and memory left let run: the rest is as lost to
				// them as the devices too small.
				lost = max(lost, all-m.shareRoom(fill[m.need], fc, fm))
			}
		}
		f += m.w * float64(lost)
	}
	return f
}

// shareRoom is how much of an agent's free device room tasks of m, a
// share of one device, could take with fc CPUs and fm memory left, when n
// of them would take more than all of it.
func (m *mixCol) shareRoom(n, fc, fm int64) int64 {
	// Dividing is slow; most agents have the CPUs and memory for n.
	if m.cpu > 0 && fc < m.cpu*n {
		n = min(n, fc/m.cpu)
	}
	if m.mem > 0 && fm < m.mem*n {
		n = min(n, fm/m.mem)
	}
	return n * m.share
}

// scoreOn is the packing score of s on ag.
func (a *Allocator) scoreOn(ag *agent, s *shape) packScore {
	pa := a.packAgentOf(ag)
	var sc packScore
	if ag.free.fits(s.res) && devicesFit(ag.free, ag.gpuDims, s.gpu) && a.admits(ag, s) {
		p := &a.pack
		after := append(p.after[:0], ag.free...).sub(s.res)
		chooseDevices(ag.free, ag.gpuDims, s.gpu, func(j int, x int64) { after[j] -= x })
		p.after = after
		g := float64(s.gpu.whole*protocol.DeviceMilli + s.gpu.share)
		sc.delta = a.fragOf(ag, pa, after) - pa.frag + packPressure*g*pa.pressure
		// The capacity holds no devices: shareOf reads only the rest.
		sc.tight, sc.ok = a.shareOf(after), true
		for _, j := range ag.gpuDims {
			sc.gpuLeft += after.at(j)
		}
	}
	return sc
}

// packPressure weighs an agent's pressure against fragmentation.
var packPressure = 1.0
