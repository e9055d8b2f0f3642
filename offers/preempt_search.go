package offers

// The search for the best pick of victims over all agents (bestPick):
// what a scan of every agent in order finds, reading far fewer agents.

// victimSearch finds, for one need's next task, the agent with the best
// pick, as a scan of every agent in order would, without scanning every
// agent each time. It keeps each agent's pick in a heap (better first,
// then the earlier agent) and reads agents in order of the nearest kin
// among their candidates: once the best pick is at least as near as every
// agent not read yet could offer, it is the best of all. Picks stay right
// between tasks of the same need (same shape, same headroom ask) because
// candidates only go and protection only tightens: an agent whose room or
// tasks change, or whose pick takes a task whose protection a new victim
// may have changed, is read again.
type victimSearch struct {
	n     *need
	f     *framework
	s     *shape
	req   vec
	epoch uint32
	// Every agent with a candidate nearer than level is read. At level:
	// stage 0, agents with a revocable candidate there were looked at for
	// a pick of one revocable task, and pending are those that had none;
	// stage 1, those are read too; stage 2, every agent with a candidate
	// there is. One revocable victim of the level is the best pick there
	// can be once every agent that could offer one is looked at.
	level   int
	stage   int
	pending []*agent
	heap    []searchEntry
	bulk    bool // file appends, to be heapInit
	dirty   []int32
	// deps lists, by node, the agents whose pick protection checked
	// against what the node runs for sure.
	deps map[*node][]int32
	// walk is the walk over a shared order under way (preempt_walk.go).
	walk *sharedWalk
}

// searchEntry is an agent's pick in the heap, by its order (better's).
type searchEntry struct {
	tier, count, sure int32
	ag                int32
	spare, newest     int64
	ver               uint32
	// one is the pick's one task, when it was not filed whole (-1).
	one int32
}

// searchState is the planner's per-agent memory of searches: read in
// which search, its pick and the pick's version, to be read again in which
// search, and looked at for one revocable victim in which stage
// (planner.lookStamp).
type searchState struct {
	epoch  []uint32
	ver    []uint32
	dirty  []uint32
	looked []uint32
	listed []uint32
	// listedAt is, by agent, its place in the quickList being built.
	listedAt []int32
	picks    []pick
}

// bestPick is the best pick over all agents for one task of s for f,
// freeing at least req besides room, with the warned tasks n may take
// there counted as room first.
func (p *planner) bestPick(n *need, f *framework, s *shape, req vec) (pick, bool) {
	vs := p.search
	if vs == nil || vs.n != n || vs.f != f || vs.s != s || !vecEqual(vs.req, req) {
		vs = p.newSearch(n, f, s, req)
	}
	for _, i := range vs.dirty {
		p.states.dirty[i] = 0
		p.readAgent(vs, p.a.agentList[i])
	}
	vs.dirty = vs.dirty[:0]
	for {
		if vs.walk != nil {
			p.walkSync(vs)
		}
		for len(vs.heap) > 0 && vs.heap[0].ver != p.states.ver[vs.heap[0].ag] {
			heapPop(&vs.heap)
		}
		if vs.walk != nil && p.walkStep(vs) {
			continue
		}
		if len(vs.heap) > 0 {
			top := vs.heap[0]
			if int(top.tier) >= vs.level && (vs.stage == 2 || top.count == 1 && top.sure == 0) {
				if top.one >= 0 {
					return pick{ag: p.a.agentList[top.ag], tasks: []int{int(top.one)}, tier: int(top.tier), sure: int(top.sure),
						newest: top.newest, spare: top.spare}, true
				}
				return p.states.picks[top.ag], true
			}
		}
		switch {
		case vs.stage == 0:
			if vs.walk != nil {
				p.walkFinish(vs)
			}
			vs.stage = 1
			for _, ag := range vs.pending {
				if p.states.epoch[ag.idx] != vs.epoch {
					p.readAgent(vs, ag)
				}
			}
			vs.pending = vs.pending[:0]
		case vs.stage == 1:
			vs.stage = 2
			if !vs.n.revocableOnly {
				p.readTier(vs, vs.level, false)
			}
		case vs.level > 0:
			vs.level, vs.stage = vs.level-1, 0
			p.lookStamp++
			p.readTier(vs, vs.level, true)
		default:
			return pick{}, false
		}
	}
}

func (p *planner) newSearch(n *need, f *framework, s *shape, req vec) *victimSearch {
	if p.states.epoch == nil {
		k, b := len(p.a.agentList), &p.a.preempt.bufs
		p.states = searchState{epoch: reuse(&b.epoch, k), ver: reuse(&b.ver, k), dirty: reuse(&b.dirty, k),
			looked: reuse(&b.looked, k), listed: reuse(&b.listed, k), listedAt: reuse(&b.listedAt, k), picks: reuse(&b.picks, k)}
	}
	epoch := uint32(1)
	if p.search != nil {
		epoch = p.search.epoch + 1
	}
	b := &p.a.preempt.bufs
	if old := p.search; old != nil {
		// The search it replaces is done with them.
		b.heap, b.pending = old.heap[:0], old.pending[:0]
	}
	vs := &victimSearch{n: n, f: f, s: s, req: req.clone(), epoch: epoch, level: n.maxTier + 1, stage: 2, deps: map[*node][]int32{},
		heap: b.heap[:0], pending: b.pending[:0]}
	p.search = vs
	return vs
}

// readTier reads the agents not read yet that hold a candidate of the
// tier: with a revocable one, looking for a pick of one revocable task
// (quickOne), else with a non-revocable one.
func (p *planner) readTier(vs *victimSearch, tier int, revocable bool) {
	vs.bulk = true
	defer func() {
		vs.bulk = false
		heapInit(vs.heap)
	}()
	if vs.n.byTier == nil {
		vs.n.byTier = p.tierLists(vs.n)
	}
	if revocable && p.a.constrainedRoles == 0 && vs.req.isZero() {
		p.readTierShared(vs, tier)
		return
	}
	for _, f := range vs.n.byTier[tier] {
		for _, i := range p.byFw[f.idx] {
			t := &p.tasks[i]
			if t.Revocable != revocable {
				// byFw lists the revocable tasks first.
				if revocable {
					break
				}
				continue
			}
			if t.removed || t.Warned || t.NonPreemptible || p.states.epoch[t.ai] == vs.epoch {
				continue
			}
			switch {
			case !revocable:
				p.readAgent(vs, t.ag)
			case p.states.looked[t.ai] == p.lookStamp:
				// Looked at already in this stage.
			default:
				switch p.quickOne(vs, t.ag, tier) {
				case quickUnsure:
					p.readAgent(vs, t.ag)
				case quickNone:
					p.states.looked[t.ai] = p.lookStamp
					vs.pending = append(vs.pending, t.ag)
				}
			}
		}
	}
}

// tierLists lists the frameworks with tasks n may take, by tier (fwTier):
// those below each ancestor of n's node but not below the next one down.
func (p *planner) tierLists(n *need) [][]*framework {
	byTier := make([][]*framework, n.maxTier+1)
	for c, x := n.node, n.node.parent; x != nil; c, x = x, x.parent {
		d := n.ancestors[x]
		if d > n.maxTier {
			continue
		}
		outer, inner := p.below(x), p.below(c)
		list := p.a.preempt.bufs.tierFws.take(int(outer[1] - outer[0] - (inner[1] - inner[0])))[:0]
		for _, span := range [2][2]int32{{outer[0], inner[0]}, {inner[1], outer[1]}} {
			for _, f := range p.dfsFws[span[0]:span[1]] {
				if len(p.byFw[f.idx]) > 0 && (n.guarantee || !p.underShortGuarantee(f)) {
					list = append(list, f)
				}
			}
		}
		byTier[d] = list
	}
	return byTier
}

// quickOne files ag's pick if it is one revocable task of the tier: the
// first candidate pickOn would take, when ag holds no candidate nearer
// (none is left unread nearer than the level) and no warned task. It says
// whether it filed one, whether ag's pick is surely no such task, or
// whether it cannot tell (ag holds warned tasks).
func (p *planner) quickOne(vs *victimSearch, ag *agent, tier int) int {
	if p.hasWarned[ag.idx] {
		return quickUnsure
	}
	if !p.usable(ag, vs.f, vs.s) {
		return quickNone
	}
	short := p.shortInto(ag, vs.s, vs.req)
	if short.isZero() {
		return quickNone
	}
	for _, i := range p.onAgent(ag) {
		t := &p.tasks[i]
		if t.removed || t.Warned || t.NonPreemptible {
			continue
		}
		if !t.Revocable {
			return quickNone
		}
		if !t.res.fits(short) {
			continue
		}
		if d, ok := p.eligible(t, vs.n); !ok || d != tier {
			continue
		}
		p.states.epoch[ag.idx] = vs.epoch
		p.states.ver[ag.idx]++
		c := pick{ag: ag, tasks: p.one(i), tier: tier, newest: t.startNs}
		c.spare = p.spareFor(c, vs.s.res)
		p.file(vs, c)
		return quickFiled
	}
	return quickNone
}

// quickOne's answers.
const (
	quickFiled = iota
	quickNone
	quickUnsure
)

// one is a list of the one task i.
func (p *planner) one(i int) []int {
	if len(p.arena) == cap(p.arena) {
		p.arena = make([]int, 0, 1024)
	}
	p.arena = append(p.arena, i)
	return p.arena[len(p.arena)-1 : len(p.arena) : len(p.arena)]
}

// shortInto is shortOn in the planner's scratch vector.
func (p *planner) shortInto(ag *agent, s *shape, req vec) vec {
	free := p.free(ag)
	short := p.shortBuf[:0]
	for j, x := range s.res {
		d := max(x-free.at(j), req.at(j), 0)
		short = append(short, d)
	}
	for j := len(s.res); j < len(req); j++ {
		short = append(short, max(req[j], 0))
	}
	p.shortBuf = short
	return short
}

// file records c as its agent's pick.
func (p *planner) file(vs *victimSearch, c pick) {
	idx := c.ag.idx
	p.states.picks[idx] = c
	e := searchEntry{tier: int32(c.tier), count: int32(len(c.tasks)), sure: int32(c.sure), ag: int32(idx),
		spare: c.spare, newest: c.newest, ver: p.states.ver[idx], one: -1}
	if vs.bulk {
		vs.heap = append(vs.heap, e) // heapInit after
		return
	}
	heapPush(&vs.heap, e)
}

// readAgent computes ag's pick for the search and files it.
func (p *planner) readAgent(vs *victimSearch, ag *agent) {
	p.states.epoch[ag.idx] = vs.epoch
	p.states.ver[ag.idx]++
	if !p.usable(ag, vs.f, vs.s) {
		return
	}
	short := p.shortOn(ag, vs.s, vs.req)
	warned := p.warnedOnFor(ag, vs.n, short)
	var room vec
	for _, i := range warned {
		room = room.add(p.tasks[i].res)
	}
	c, ok := p.pickOn(ag, vs.n, shortfall(short, room), false)
	if !ok {
		return
	}
	c.warned, c.short = warned, short
	c.spare = p.spareFor(c, vs.s.res)
	p.file(vs, c)
	for _, i := range c.tasks {
		t := &p.tasks[i]
		if t.Revocable {
			continue
		}
		tier, _ := p.eligible(t, vs.n)
		for x := t.f.leaf; x != nil && depth(x) > tier; x = x.parent {
			vs.deps[x] = append(vs.deps[x], int32(ag.idx))
		}
	}
}

// touched marks ag's pick to be read again: its room or tasks changed.
func (p *planner) touched(ag *agent) {
	vs := p.search
	if vs == nil || p.states.epoch[ag.idx] != vs.epoch || p.states.dirty[ag.idx] == vs.epoch {
		return
	}
	p.states.dirty[ag.idx] = vs.epoch
	vs.dirty = append(vs.dirty, int32(ag.idx))
}

// sureChanged marks the picks whose protection checked what n or an
// ancestor runs for sure, which just went down.
func (p *planner) sureChanged(n *node) {
	vs := p.search
	if vs == nil {
		return
	}
	for x := n; x != nil; x = x.parent {
		for _, i := range vs.deps[x] {
			p.touched(p.a.agentList[i])
		}
		delete(vs.deps, x)
	}
}

// before orders search entries as better orders picks, then the earlier
// agent first.
func (e searchEntry) before(o searchEntry) bool {
	switch {
	case e.tier != o.tier:
		return e.tier > o.tier
	case e.count != o.count:
		return e.count < o.count
	case e.sure != o.sure:
		return e.sure < o.sure
	case e.spare != o.spare:
		return e.spare > o.spare
	case e.newest != o.newest:
		return e.newest > o.newest
	}
	return e.ag < o.ag
}

func heapPush(h *[]searchEntry, e searchEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].before(s[up]) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

// heapInit makes h a heap.
func heapInit(h []searchEntry) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

func siftDown(s []searchEntry, i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].before(s[m]) {
			m = l
		}
		if r < len(s) && s[r].before(s[m]) {
			m = r
		}
		if m == i {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

func heapPop(h *[]searchEntry) {
	s := *h
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	siftDown(s, 0)
	*h = s
}

// below is the range of dfsFws holding the frameworks below n.
func (p *planner) below(n *node) [2]int32 {
	if p.fwRange == nil {
		p.fwRange = map[*node][2]int32{}
		p.fwPos = make([]int32, len(p.a.fwByIdx))
		var walk func(n *node)
		walk = func(n *node) {
			start := int32(len(p.dfsFws))
			if n.isLeaf() {
				p.fwPos[n.fw.idx] = start
				p.dfsFws = append(p.dfsFws, n.fw)
			}
			for _, c := range n.children {
				walk(c)
			}
			p.fwRange[n] = [2]int32{start, int32(len(p.dfsFws))}
		}
		walk(p.a.tree.root)
	}
	return p.fwRange[n]
}
