package offers

import (
	"fmt"
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

// packState is the mix and each agent's cached scores.
type packState struct {
	// ids numbers the pending shapes' keys seen, for the agents' score
	// tables.
	ids     map[string]int
	mix     map[string]*mixShape
	total   int64
	builtAt int64 // total when the weights were last taken
	weights []mixShape
	// needs are the mix's distinct device needs.
	needs  []gpuNeed
	mixVer uint64
	// small, fill, rooms and below are fragOf's scratch, after scoreOn's.
	small, fill, rooms, below []int64
	after                     vec
	// cols are the weights' shapes as fragOf reads them; jc and jm the
	// registry's indices of CPUs and memory.
	cols   []mixCol
	jc, jm int
	// classes are admitClass's, for the mix version classVer.
	classes  map[uint64]*admitClass
	classVer uint64
	// reachVer is the mixVer the weights' reach was computed at; gpuCap
	// the cluster's GPU capacity then.
	reachVer uint64
	gpuCap   float64
	// capSeq is the allocator's capSeq the scores were taken at.
	capSeq uint64
	agents []packAgent
	order  []*agent
	// states groups the agents by state (placement_states.go).
	states packStates
	// chosen is packOrder's scratch.
	chosen []int
	// admit caches, by constraints (constraintsKey), whether each agent
	// satisfies them: constraint matching is slow and attributes do not
	// change while an agent stays.
	admit map[string][]admitEntry
}

// mixCol is a mix shape as fragOf reads it: its CPU and memory, its
// device need (a share, whole devices, its index in packState.needs), any
// other resources (nil: none), and its weight.
type mixCol struct {
	cpu, mem, share, whole int64
	need                   int
	rest                   vec
	w                      float64
}

// admitEntry is whether the agent joined at serial satisfies some
// constraints.
type admitEntry struct {
	serial uint64
	ok     bool
}

// mixShape is a shape of the running tasks and how many run.
type mixShape struct {
	res vec
	gpu gpuNeed
	// reach is the GPU capacity of the agents whose attributes admit it
	// (packCaps).
	reach  float64
	need   int    // index of gpu in packState.needs
	shape  *shape // for its constraints, while declared
	n      int64
	weight float64
}

// packAgent is what packing knows of an agent, valid while neither the
// agent (ver) nor the mix (mixVer) changed: the class of its attributes
// (which mix shapes they admit), its fragmentation, and the pressure on
// its GPUs.
type packAgent struct {
	ver, mixVer uint64
	class       *admitClass
	frag        float64
	// pressure is how much the mix leans on this agent's GPUs: the sum
	// over the shapes it admits of their weight times the cluster's GPU
	// capacity over the capacity that admits them.
	pressure float64
	// attrs hashes the attributes of the agent joined at attrSerial, for
	// its state (placement_states.go).
	attrs, attrSerial uint64
}

// packScore is a shape's added fragmentation on an agent, the device room
// and the dominant share of the room it would leave; ok is false where it
// does not fit. It holds while the agent's state and the mix stay as they
// were (stateCell says which).
type packScore struct {
	delta, tight float64
	gpuLeft      int64
	ok           bool
}

// gpuWeight is how much a task of m weighs in the mix: its devices' worth
// in milli-GPUs, and some for a task without any.
func (m *mixShape) gpuWeight() float64 {
	return float64(m.gpu.whole*protocol.DeviceMilli+m.gpu.share) + packBaseWeight
}

// packTolerance is how close two added fragmentations count as equal
// (in milli-GPUs), so that float noise does not hide the tighter fit.
var packTolerance = 1e-6

// packBaseWeight is what any task weighs in the mix besides its devices.
var packBaseWeight = 3000.0

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
// tasks doubled or halved since they were last taken (each new weighing
// drops every cached score).
func (a *Allocator) refreshWeights() {
	p := &a.pack
	if p.capSeq != a.capSeq {
		// The cluster's capacity weighs the tightness of every fit and
		// the reach of every shape.
		p.capSeq = a.capSeq
		p.mixVer++
	}
	if p.weights != nil && p.total < 2*max(p.builtAt, 1) && 2*p.total > p.builtAt {
		return
	}
	p.builtAt = p.total
	p.weights = p.weights[:0]
	keys := make([]string, 0, len(p.mix))
	for k := range p.mix {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p.needs = p.needs[:0]
	sum := 0.0
	for _, k := range keys {
		m := p.mix[k]
		sum += float64(m.n) * m.gpuWeight()
	}
	for _, k := range keys {
		m := *p.mix[k]
		m.weight = float64(m.n) * m.gpuWeight() / max(sum, 1)
		m.need = slices.Index(p.needs, m.gpu)
		if m.need < 0 {
			m.need = len(p.needs)
			p.needs = append(p.needs, m.gpu)
		}
		p.weights = append(p.weights, m)
	}
	a.packColumns()
	p.mixVer++
}

// packAgentOf is ag's packing record, brought up to date.
func (a *Allocator) packAgentOf(ag *agent) *packAgent {
	p := &a.pack
	pa := a.packAgentSlot(ag)
	if pa.mixVer != p.mixVer || pa.class == nil {
		a.packReach()
		c := a.admitClass(ag, pa)
		pa.class, pa.pressure = c, c.pressure
	}
	if pa.ver != ag.ver+1 || pa.mixVer != p.mixVer {
		pa.ver, pa.mixVer = ag.ver+1, p.mixVer
		pa.frag = a.fragOf(ag, pa, ag.free)
	}
	return pa
}

// idOf numbers a shape key.
func (p *packState) idOf(key string) int {
	if p.ids == nil {
		p.ids = map[string]int{}
	}
	id, ok := p.ids[key]
	if !ok {
		id = len(p.ids)
		p.ids[key] = id
	}
	return id
}

// packAgentSlot is ag's packing record as it stands.
func (a *Allocator) packAgentSlot(ag *agent) *packAgent {
	p := &a.pack
	if len(p.agents) <= ag.idx {
		p.agents = append(p.agents, make([]packAgent, len(a.agentList)-len(p.agents))...)
	}
	return &p.agents[ag.idx]
}

// packColumns lays the weights' shapes out as fragOf reads them.
func (a *Allocator) packColumns() {
	p := &a.pack
	jc, jm, jg := a.reg.id(protocol.ResCPUs), a.reg.id(protocol.ResMem), a.reg.id(protocol.ResGPUs)
	p.jc, p.jm = jc, jm
	p.cols = p.cols[:0]
	for i := range p.weights {
		m := &p.weights[i]
		var rest vec
		for j, x := range m.res {
			if x > 0 && j != jc && j != jm && j != jg && !a.reg.isDevice(j) {
				rest = rest.grow(j + 1)
				rest[j] = x
			}
		}
		p.cols = append(p.cols, mixCol{cpu: m.res.at(jc), mem: m.res.at(jm), share: m.gpu.share, whole: m.gpu.whole,
			need: m.need, rest: rest, w: m.weight})
	}
}

// admits reports whether ag satisfies s's constraints (s nil: none),
// through the cache.
func (a *Allocator) admits(ag *agent, s *shape) bool {
	if s == nil || !s.constrained() {
		return true
	}
	p := &a.pack
	if s.ckey[0] == "" {
		s.ckey[0] = fmt.Sprint(s.hard, s.soft)
		s.ckey[1] = s.ckey[0] + " relaxed"
	}
	key := s.ckey[btoi(s.relaxed)]
	if p.admit == nil {
		p.admit = map[string][]admitEntry{}
	}
	col := p.admit[key]
	if len(col) < len(a.agentList) {
		col = append(col, make([]admitEntry, len(a.agentList)-len(col))...)
		p.admit[key] = col
	}
	e := &col[ag.idx]
	if e.serial != ag.serial {
		*e = admitEntry{serial: ag.serial, ok: a.satisfiesOn(ag, s)}
	}
	return e.ok
}
