package offers

import (
	"cmp"
	"math"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// Packing by fragmentation (docs/placement.md). The workload's mix is the
// shapes of the running tasks, by count. An agent's fragmentation for one
// shape is the GPU room on it no task of the shape can use: all of its
// free device room when the shape cannot run there at all, else the room
// of the devices too small for it (less than its share, or not whole for
// whole devices). Its fragmentation is the mix's weighted sum. PlacementPack
// visits first the agents where a pending shape adds the least
// fragmentation, then those it fits most tightly.

// packState is the mix and a cache of each agent's score for the round.
type packState struct {
	mix     map[string]*mixShape
	total   int64
	builtAt int64 // total when the weights were last taken
	weights []mixShape
	mixVer  uint64
	scores  []packScore
	order   []*agent
}

// mixShape is a shape of the running tasks and how many run.
type mixShape struct {
	res    vec
	gpu    gpuNeed
	shape  *shape // for its constraints, while declared
	n      int64
	weight float64
}

// packScore caches an agent's score: at which agent and mix version.
type packScore struct {
	agVer, mixVer uint64
	// key is the one pending shape's key it was computed for ("" for
	// several).
	key         string
	frag, tight float64
}

// count follows launches and ends of tasks of f's shape key.
func (p *packState) count(f *framework, key string, delta int64) {
	if p.mix == nil {
		p.mix = map[string]*mixShape{}
	}
	m := p.mix[key]
	if m == nil {
		if delta < 0 {
			return
		}
		s := f.shapeByKey(key)
		if s == nil {
			return
		}
		m = &mixShape{res: s.res, gpu: s.gpu, shape: s}
		p.mix[key] = m
	}
	m.n += delta
	p.total += delta
	if m.n <= 0 {
		delete(p.mix, key)
	}
}

// refreshWeights takes the mix's weights anew when the count of running
// tasks moved by a tenth since they were last taken.
func (p *packState) refreshWeights() {
	if p.weights != nil && math.Abs(float64(p.total-p.builtAt)) <= 0.1*float64(max(p.builtAt, 1)) {
		return
	}
	p.builtAt = p.total
	p.weights = p.weights[:0]
	keys := make([]string, 0, len(p.mix))
	for k := range p.mix {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m := *p.mix[k]
		m.weight = float64(m.n) / float64(max(p.total, 1))
		p.weights = append(p.weights, m)
	}
	p.mixVer++
}

// fragFor is the GPU room on free (ag's devices) that a task of m cannot use.
func (a *Allocator) fragFor(ag *agent, free vec, m *mixShape) float64 {
	var all, small int64
	for _, j := range ag.gpuDims {
		x := free.at(j)
		all += x
		switch {
		case m.gpu.share > 0 && x < m.gpu.share:
			small += x
		case m.gpu.whole > 0 && x < protocol.DeviceMilli:
			small += x
		}
	}
	if all == 0 {
		return 0
	}
	if !free.fits(m.res) || !devicesFit(free, ag.gpuDims, m.gpu) || m.shape != nil && !a.satisfiesOn(ag, m.shape) {
		return float64(all)
	}
	return float64(small)
}

// fragOf is the mix's weighted fragmentation of ag with free.
func (a *Allocator) fragOf(ag *agent, free vec) float64 {
	f := 0.0
	for i := range a.pack.weights {
		m := &a.pack.weights[i]
		f += m.weight * a.fragFor(ag, free, m)
	}
	return f
}

// packOrder orders the agents for PlacementPack: least added
// fragmentation for a pending shape first, then the tightest fit (least
// dominant share of free room left), then the order they joined; agents
// no pending shape fits last.
func (a *Allocator) packOrder() []*agent {
	p := &a.pack
	p.refreshWeights()
	var pending []*shape
	for _, f := range a.fwByIdx {
		if f == nil || !f.demanding() {
			continue
		}
		for _, s := range f.shapes {
			if s.pending() > 0 {
				pending = append(pending, s)
			}
		}
	}
	if len(p.scores) < len(a.agentList) {
		p.scores = make([]packScore, len(a.agentList)*2)
	}
	p.order = append(p.order[:0], a.agentList...)
	for _, ag := range p.order {
		sc := &p.scores[ag.idx]
		key := ""
		if len(pending) == 1 {
			key = pending[0].key
			if sc.agVer == ag.ver+1 && sc.mixVer == p.mixVer && sc.key == key {
				continue
			}
		}
		*sc = packScore{agVer: ag.ver + 1, mixVer: p.mixVer, key: key, frag: math.Inf(1), tight: math.Inf(1)}
		base := -1.0
		for _, s := range pending {
			if !ag.free.fits(s.res) || !devicesFit(ag.free, ag.gpuDims, s.gpu) || !a.satisfiesOn(ag, s) {
				continue
			}
			after := ag.free.clone().sub(s.res)
			if dv := pickDevices(ag.free, ag.gpuDims, s.gpu); dv != nil {
				after = after.sub(dv)
			}
			if base < 0 {
				base = a.fragOf(ag, ag.free)
			}
			d := a.fragOf(ag, after) - base
			tight := a.shareOf(a.withoutDevices(after))
			if d < sc.frag || d == sc.frag && tight < sc.tight {
				sc.frag, sc.tight = d, tight
			}
		}
	}
	slices.SortStableFunc(p.order, func(x, y *agent) int {
		sx, sy := &p.scores[x.idx], &p.scores[y.idx]
		return cmp.Or(cmp.Compare(sx.frag, sy.frag), cmp.Compare(sx.tight, sy.tight), cmp.Compare(x.idx, y.idx))
	})
	return p.order
}
