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

// packOrder orders the agents for PlacementPack: least added
// fragmentation for a pending shape first, then the least device room
// left, then the tightest fit (least dominant share of free room left),
// then the order of agentList; agents
// no pending shape fits last. When few units are pending only that many
// best agents are put first, the rest following in agentList's order.
func (a *Allocator) packOrder() []*agent {
	p := &a.pack
	a.refreshWeights()
	var pending []*shape
	var ids []int
	units := int64(0)
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
	st.best = reuse(&st.best, len(st.members))
	st.next = reuse(&st.next, len(st.members))
	cols := make([][]stateCell, len(pending))
	for k := range pending {
		cols[k] = st.column(ids[k], len(a.agentList))
	}
	// Each state's best score over the pending shapes, scored once per
	// mix for all its agents; the states some shape fits.
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
	// The best units agents in order: each state offers its agents in
	// agentList's order, so the states are merged by their next agent.
	less := func(x, y int32) bool {
		return packLess(st.best[x], st.best[y], int(st.members[x][st.next[x]]), int(st.members[y][st.next[y]]))
	}
	if units == 1 {
		best := int32(-1)
		for _, sid := range heap {
			if best < 0 || less(sid, best) {
				best = sid
			}
		}
		if best >= 0 {
			i := st.members[best][0]
			chosen = append(chosen, int(i))
		}
	} else {
		down := func(k int) {
			for {
				l, r, m := 2*k+1, 2*k+2, k
				if l < len(heap) && less(heap[l], heap[m]) {
					m = l
				}
				if r < len(heap) && less(heap[r], heap[m]) {
					m = r
				}
				if m == k {
					return
				}
				heap[k], heap[m] = heap[m], heap[k]
				k = m
			}
		}
		for k := len(heap)/2 - 1; k >= 0; k-- {
			down(k)
		}
		for int64(len(chosen)) < units && len(heap) > 0 {
			sid := heap[0]
			i := st.members[sid][st.next[sid]]
			chosen = append(chosen, int(i))
			if st.next[sid]++; int(st.next[sid]) == len(st.members[sid]) {
				heap[0] = heap[len(heap)-1]
				heap = heap[:len(heap)-1]
			}
			down(0)
		}
	}
	st.heap = heap
	return a.packOrderOf(chosen)
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

// packPressure weighs an agent's pressure against fragmentation.
var packPressure = 1.0

// admitClass is what the mix's constraints make of agents with ag's
// attributes: which shapes they admit, and the pressure on their GPUs
// (packAgent), once per weighing of the mix.
func (a *Allocator) admitClass(ag *agent, pa *packAgent) *admitClass {
	p := &a.pack
	if p.classVer != p.mixVer || p.classes == nil {
		p.classVer = p.mixVer
		p.classes = map[uint64]*admitClass{}
	}
	key := attrsOf(ag, pa)
	c := p.classes[key]
	if c == nil {
		c = &admitClass{admits: make([]bool, len(p.weights))}
		for i := range p.weights {
			m := &p.weights[i]
			c.admits[i] = a.admits(ag, m.shape)
			if c.admits[i] && m.reach > 0 {
				c.pressure += m.weight * p.gpuCap / m.reach
			}
			if c.admits[i] {
				c.cols = append(c.cols, p.cols[i])
			} else {
				c.wOut += p.cols[i].w
			}
		}
		p.classes[key] = c
	}
	return c
}

// admitClass is the mix's view of agents with the same attributes: the
// shapes they admit (admits, and their columns in cols), the weight of
// those they do not (wOut), and the pressure on their GPUs.
type admitClass struct {
	admits   []bool // read only: shared by the class's agents
	cols     []mixCol
	wOut     float64
	pressure float64
}

// packReach computes, once per weighing of the mix, the GPU capacity each
// mix shape's constraints admit, by class of attributes.
func (a *Allocator) packReach() {
	p := &a.pack
	if p.reachVer == p.mixVer {
		return
	}
	p.reachVer = p.mixVer
	p.gpuCap = 0
	for i := range p.weights {
		p.weights[i].reach = 0
	}
	type class struct {
		rep *agent
		gpu float64
	}
	var classes []class
	at := map[uint64]int{}
	for _, ag := range a.agentList {
		var g float64
		for _, j := range ag.gpuDims {
			g += float64(ag.total.at(j))
		}
		p.gpuCap += g
		key := attrsOf(ag, a.packAgentSlot(ag))
		k, ok := at[key]
		if !ok {
			k = len(classes)
			at[key] = k
			classes = append(classes, class{rep: ag})
		}
		classes[k].gpu += g
	}
	for _, c := range classes {
		for i := range p.weights {
			if m := &p.weights[i]; a.admits(c.rep, m.shape) {
				m.reach += c.gpu
			}
		}
	}
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
