package offers

import "github.com/allot-project/allot/internal/heapq"

// On a large cluster most agents hold a revocable task below the root, so
// reading every agent's entry in a quickList for each need costs more than
// the rest of the plan. A need wants only the best pick, though: each
// quickList keeps, by shape, a heap of its agents by the most any pick
// there could weigh (sharedOrder: the spare room were the largest of its
// tasks in the list gone, and the latest start among them), and a need
// walks it best first, reading agents' entries only until its best pick so
// far beats what the next agent could offer (sharedWalk). Agents changed
// since the heap was built are read first, out of order; the agents left
// unread are read, in one go, before the search looks beyond one
// revocable task (stage 1), as if all had been read at once.

// walkMin is the fewest agents a quickList holds for its searches to walk
// a heap rather than read every agent.
// preemptState.walkMin overrides it (tests).
const walkMin = 1024

// sharedOrder is a quickList's agents (indices into its agents) for one
// shape: those holding warned tasks (which the search reads in full) in
// unsure, the others in heap, best first by bound, as of the touch log's
// length at. changed counts the list's agents in the touch log from at to
// scanned.
type sharedOrder struct {
	unsure, heap     []int32
	bound            []quickPick
	at               int
	scanned, changed int
}

// sharedWalk is a search's walk over a sharedOrder for one tier: front
// holds the places in the order's heap whose parents were read, logAt how
// much of the touch log it has read.
type sharedWalk struct {
	ql      *quickList
	entries []quickRes
	ord     *sharedOrder
	kind    int
	excl    uint64 // the seq of the child below which the need's own branch lies
	tier    int32
	// front is a heap of places of ord's heap still to walk, best first
	// by placeLess.
	front     []int32
	placeLess func(j, m int32) bool
	logAt     int
}

// order is ql's sharedOrder for the search's shape, built again when more
// of its agents changed since it was built than a walk should read out of
// order.
func (p *planner) order(vs *victimSearch, ql *quickList, sk quickShape) *sharedOrder {
	ord := ql.orders[sk]
	if ord != nil {
		for ; ord.scanned < len(p.touchLog); ord.scanned++ {
			if ql.pos[p.touchLog[ord.scanned]] > 0 {
				ord.changed++
			}
		}
		if ord.changed <= len(ql.agents)/8 {
			return ord
		}
	} else {
		ord = &sharedOrder{bound: make([]quickPick, len(ql.agents))}
		if ql.orders == nil {
			ql.orders = map[quickShape]*sharedOrder{}
		}
		ql.orders[sk] = ord
	}
	ord.unsure, ord.heap = ord.unsure[:0], ord.heap[:0]
	width := len(p.a.reg.names)
	for k, i := range ql.agents {
		if p.hasWarned[i] {
			ord.unsure = append(ord.unsure, int32(k))
			continue
		}
		ord.bound[k] = quickPick{spare: p.spareBound(i, ql.most[k*width:(k+1)*width], vs.s.res), newest: ql.newest[k]}
		ord.heap = append(ord.heap, int32(k))
	}
	heapq.Init(ord.heap, func(x, y int32) bool { return ord.bound[x].better(ql.agents[x], ord.bound[y], ql.agents[y]) })
	ord.at, ord.scanned, ord.changed = len(p.touchLog), len(p.touchLog), 0
	return ord
}

// spareBound is the most spareFor could give a pick of one task on agent i
// for v, the task holding at most most.
func (p *planner) spareBound(i int32, most, v vec) int64 {
	var free vec
	if fi := &p.freeIdx; fi.max != nil {
		// The free index's leaf: the same numbers, side by side.
		k := (fi.size + int(i)) * fi.width
		free = vec(fi.max[k : k+fi.width])
	} else if free = p.vfree[i]; free == nil {
		free = p.a.agentList[i].free
	}
	n := int64(-1)
	for j, x := range v {
		if x <= 0 {
			continue
		}
		var m int64
		if j < len(most) {
			m = most[j]
		}
		if k := max(0, free.at(j)-x+m) / x; n < 0 || k < n {
			n = k
		}
	}
	return max(n, 0)
}

// better orders two one-task picks of the same tier, on agents x and y, as
// searchEntry's before does.
func (x quickPick) better(xag int32, y quickPick, yag int32) bool {
	switch {
	case x.spare != y.spare:
		return x.spare > y.spare
	case x.newest != y.newest:
		return x.newest > y.newest
	}
	return xag < yag
}

// less orders places j and m of the order's heap.
func (o *sharedOrder) less(ql *quickList, j, m int32) bool {
	x, y := o.heap[j], o.heap[m]
	return o.bound[x].better(ql.agents[x], o.bound[y], ql.agents[y])
}

// startWalk begins w's walk: the agents holding warned tasks, then those
// changed since the order was built.
func (p *planner) startWalk(vs *victimSearch, w *sharedWalk) {
	p.a.preempt.walks++
	vs.walk = w
	w.logAt = w.ord.at
	for _, k := range w.ord.unsure {
		p.walkRead(vs, w, int(k))
	}
	if w.placeLess == nil {
		w.placeLess = func(j, m int32) bool { return w.ord.less(w.ql, j, m) }
	}
	if len(w.ord.heap) > 0 {
		w.front = append(w.front[:0], 0)
	}
	p.walkSync(vs)
}

// walkRead reads agent k of the walk's list as a read of the whole list
// would.
func (p *planner) walkRead(vs *victimSearch, w *sharedWalk, k int) {
	if !p.walkOpen(vs, w, k) {
		return
	}
	i := w.ql.agents[k]
	ag := p.a.agentList[i]
	r := &w.entries[k]
	if r.ver != p.agentVer[i]+1 {
		*r = p.quickEntry(vs, w.ql, k)
	}
	q := &r.picks[w.kind][0]
	if q.task >= 0 && q.child == w.excl {
		// Its own branch: the first below another child.
		q = &r.picks[w.kind][1]
	}
	switch {
	case q.task == -2:
		p.readAgent(vs, ag)
	case q.task >= 0:
		p.states.epoch[i] = vs.epoch
		p.states.ver[i]++
		e := searchEntry{tier: w.tier, count: 1, ag: i, spare: q.spare, newest: q.newest, ver: p.states.ver[i], one: q.task}
		if vs.bulk {
			vs.heap = append(vs.heap, e) // readTier makes it a heap
		} else {
			vs.heap = heapq.Push(vs.heap, e, searchEntry.before)
		}
	default:
		p.states.looked[i] = p.lookStamp
		vs.pending = append(vs.pending, ag)
	}
}

// walkOpen reports whether agent k of the walk's list is still to read in
// this search: the need may take its tasks, and it was neither read nor
// set aside for stage 1.
func (p *planner) walkOpen(vs *victimSearch, w *sharedWalk, k int) bool {
	i := w.ql.agents[k]
	return (vs.n.guarantee || w.ql.open[k]) && p.states.epoch[i] != vs.epoch && p.states.looked[i] != p.lookStamp
}

// walkSync reads the agents of the walk's list changed since it last
// looked: their place in the order is no longer sure.
func (p *planner) walkSync(vs *victimSearch) {
	w := vs.walk
	for ; w.logAt < len(p.touchLog); w.logAt++ {
		if k := w.ql.pos[p.touchLog[w.logAt]] - 1; k >= 0 {
			p.walkRead(vs, w, int(k))
		}
	}
}

// walkStep reads the next agent of the walk's order unless the search's
// best pick already beats what it could offer; it reports whether it read
// one.
func (p *planner) walkStep(vs *victimSearch) bool {
	w, ord := vs.walk, vs.walk.ord
	for len(w.front) > 0 {
		j := w.front[0]
		k := ord.heap[j]
		if p.walkOpen(vs, w, int(k)) {
			b := ord.bound[k]
			next := searchEntry{tier: w.tier, count: 1, ag: w.ql.agents[k], spare: b.spare, newest: b.newest}
			if len(vs.heap) > 0 && vs.heap[0].before(next) {
				return false
			}
			w.advance(j)
			p.walkRead(vs, w, int(k))
			return true
		}
		w.advance(j)
	}
	return false
}

// advance takes place j, the front's best, off the front and puts its
// children on.
func (w *sharedWalk) advance(j int32) {
	w.front = heapq.Pop(w.front, w.placeLess)
	for _, c := range [2]int32{2*j + 1, 2*j + 2} {
		if int(c) < len(w.ord.heap) {
			w.front = heapq.Push(w.front, c, w.placeLess)
		}
	}
}

// walkFinish reads every agent the walk has not, and ends it.
func (p *planner) walkFinish(vs *victimSearch) {
	w := vs.walk
	p.walkSync(vs)
	for _, k := range w.ord.heap {
		p.walkRead(vs, w, int(k))
	}
	vs.walk = nil
}
