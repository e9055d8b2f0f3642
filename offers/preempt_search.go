package offers

import "github.com/allot-project/allot/internal/heapq"

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
	bulk    bool // file appends, to be made a heap after
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
			vs.heap = heapq.Pop(vs.heap, searchEntry.before)
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

// file records c as its agent's pick.
func (p *planner) file(vs *victimSearch, c pick) {
	idx := c.ag.idx
	p.states.picks[idx] = c
	e := searchEntry{tier: int32(c.tier), count: int32(len(c.tasks)), sure: int32(c.sure), ag: int32(idx),
		spare: c.spare, newest: c.newest, ver: p.states.ver[idx], one: -1}
	if vs.bulk {
		vs.heap = append(vs.heap, e) // made a heap after
		return
	}
	vs.heap = heapq.Push(vs.heap, e, searchEntry.before)
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
