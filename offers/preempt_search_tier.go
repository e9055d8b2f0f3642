package offers

import "github.com/allot-project/allot/internal/heapq"

// readTier reads the agents not read yet that hold a candidate of the
// tier: with a revocable one, looking for a pick of one revocable task
// (quickOne), else with a non-revocable one.
func (p *planner) readTier(vs *victimSearch, tier int, revocable bool) {
	vs.bulk = true
	defer func() {
		vs.bulk = false
		heapq.Init(vs.heap, searchEntry.before)
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
