package offers

import "cmp"

// Needs whose nearest common ancestor with a candidate is the same role
// look for one revocable victim among the same tasks, but for those of
// their own branch below it. readTierShared keeps, by role, the agents
// holding revocable tasks below the role and those tasks (quickList); by
// shape, what each agent offers while it is unchanged, to a guarantee's
// need and to any other; and each need reads that, looking again only
// where the task lies in its own branch.

// quickList lists the agents holding revocable tasks below a role, and,
// by shape, each agent's entry. open says, by agent, whether a need that
// is no guarantee's may take one of them (not all lie under roles short
// of their guarantee). cands[start[k]:start[k+1]] are agent k's revocable
// tasks below the role, in the order victims are preferred.
type quickList struct {
	anc    *node
	agents []int32
	open   []bool
	start  []int32
	cands  []quickCand
	res    map[quickShape][]quickRes
	// pos is, by agent index, its place in agents plus one (0: absent);
	// most and newest are, by agent, the most of each scalar one of its
	// tasks in the list holds (in rows of the registry's width) and the
	// latest start among them; orders are preempt_walk.go's.
	pos          []int32
	most, newest []int64
	orders       map[quickShape]*sharedOrder
}

// quickCand is a revocable task in a quickList: the child of the list's
// role it lies below, and whether a need that is no guarantee's may take
// it.
type quickCand struct {
	task  int32
	open  bool
	child uint64 // its seq
}

// quickShape names a shape: its key, and whether its soft constraints
// relaxed.
type quickShape struct {
	key     string
	relaxed bool
}

// quickRes is an agent's entry for a shape, computed at agent version
// ver-1 (0: not yet). picks[kind] are for a guarantee's need (kind 0)
// and for another (1): the first task that makes room, and the first
// below another child of the role than the first's, for the needs whose
// own branch the first lies in.
type quickRes struct {
	ver   uint32
	picks [2][2]quickPick
}

// quickPick is a task below the list's role that makes room for the
// shape alone (-1: none; -2: the agent holds warned tasks, ask again),
// the child of the role it lies below (its seq: the entries hold no
// pointer, so the collector neither scans nor guards them), and what a
// pick of it would weigh.
type quickPick struct {
	task          int32
	spare, newest int64
	child         uint64
}

// readTierShared is readTier's first stage through the shared lists.
func (p *planner) readTierShared(vs *victimSearch, tier int) {
	var anc, excl *node
	for x := vs.n.node; x != nil; x = x.parent {
		switch vs.n.ancestors[x] {
		case tier:
			anc = x
		case tier + 1:
			excl = x
		}
	}
	ql := p.quickLists[anc]
	if ql == nil {
		ql = p.newQuickList(anc)
		if p.quickLists == nil {
			p.quickLists = map[*node]*quickList{}
		}
		p.quickLists[anc] = ql
	}
	sk := quickShape{vs.s.key, vs.s.relaxed}
	entries := ql.res[sk]
	if entries == nil {
		entries = p.a.preempt.bufs.quickRes.take(len(ql.agents))
		ql.res[sk] = entries
	}
	kind := 1
	if vs.n.guarantee {
		kind = 0
	}
	w := &sharedWalk{ql: ql, entries: entries, kind: kind, tier: int32(tier)}
	if excl != nil {
		w.excl = excl.seq // node seqs start at 1: 0 matches no pick
	}
	least := cmp.Or(p.a.preempt.walkMin, walkMin)
	if len(ql.agents) < least {
		// Every agent, in list order.
		for k := range ql.agents {
			p.walkRead(vs, w, k)
		}
		return
	}
	w.ord = p.order(vs, ql, sk)
	p.startWalk(vs, w)
}

// newQuickList lists the agents holding a revocable task below anc, and
// those tasks.
func (p *planner) newQuickList(anc *node) *quickList {
	ql := &quickList{anc: anc, res: map[quickShape][]quickRes{}}
	b := &p.a.preempt.bufs
	r := p.below(anc)
	fws := p.dfsFws[r[0]:r[1]]
	// each calls visit on every revocable task below anc a need may take.
	each := func(visit func(f *framework, t *planTask, i int)) {
		for _, f := range fws {
			for _, i := range p.byFw[f.idx] {
				t := &p.tasks[i]
				if !t.Revocable {
					break
				}
				if !t.Warned && !t.NonPreemptible {
					visit(f, t, i)
				}
			}
		}
	}
	p.listStamp++
	agents, total := 0, 0
	each(func(_ *framework, t *planTask, _ int) {
		total++
		if idx := t.ai; p.states.listed[idx] != p.listStamp {
			p.states.listed[idx] = p.listStamp
			p.states.listedAt[idx] = int32(agents)
			agents++
		}
	})
	ql.agents, ql.open = b.quickIdx.take(agents), b.quickOpen.take(agents)
	ql.start, ql.cands = b.quickIdx.take(agents+1), b.quickCands.take(total)
	each(func(f *framework, t *planTask, _ int) {
		k := p.states.listedAt[t.ai]
		ql.agents[k] = t.ai
		ql.open[k] = ql.open[k] || !p.underShortGuarantee(f)
		ql.start[k+1]++
	})
	for k := range agents {
		ql.start[k+1] += ql.start[k]
	}
	ql.pos = b.quickIdx.take(len(p.a.agentList))
	for k, i := range ql.agents {
		ql.pos[i] = int32(k) + 1
	}
	next := b.quickIdx.take(agents)
	copy(next, ql.start)
	width := len(p.a.reg.names)
	ql.most, ql.newest = b.quickMost.take(agents*width), b.quickMost.take(agents)
	var last *framework
	var child *node
	each(func(f *framework, t *planTask, i int) {
		if f != last {
			last = f
			for child = f.leaf; child.parent != anc; child = child.parent {
			}
		}
		k := p.states.listedAt[t.ai]
		ql.cands[next[k]] = quickCand{task: int32(i), open: !p.underShortGuarantee(f), child: child.seq}
		next[k]++
		most := ql.most[int(k)*width : int(k+1)*width]
		for j, x := range t.res[:min(len(t.res), width)] {
			most[j] = max(most[j], x)
		}
		ql.newest[k] = max(ql.newest[k], t.startNs)
	})
	// Each agent's few in the order of onAgent.
	for k := range agents {
		list := ql.cands[ql.start[k]:ql.start[k+1]]
		for m := 1; m < len(list); m++ {
			c := list[m]
			j := m
			for ; j > 0 && p.prefer(&p.tasks[c.task], &p.tasks[list[j-1].task]) < 0; j-- {
				list[j] = list[j-1]
			}
			list[j] = c
		}
	}
	return ql
}

// quickEntry is agent k's entry in ql for the search's shape: what
// quickOne would find there among the tasks below the list's role.
func (p *planner) quickEntry(vs *victimSearch, ql *quickList, k int) quickRes {
	ag := p.a.agentList[ql.agents[k]]
	res := quickRes{ver: p.agentVer[ag.idx] + 1}
	none := quickPick{task: -1}
	if p.hasWarned[ag.idx] {
		none.task = -2
	}
	res.picks = [2][2]quickPick{{none, none}, {none, none}}
	if p.hasWarned[ag.idx] || !p.usable(ag, vs.f, vs.s) {
		return res
	}
	short := p.shortInto(ag, vs.s, vs.req)
	if short.isZero() {
		return res
	}
	for _, c := range ql.cands[ql.start[k]:ql.start[k+1]] {
		t := &p.tasks[c.task]
		if t.removed || !t.res.fits(short) {
			continue
		}
		for kind := range 2 {
			if kind == 1 && !c.open {
				continue
			}
			q := &res.picks[kind]
			switch {
			case q[0].task == -1:
				q[0] = p.quickPickOf(ag, c, vs.s)
			case q[1].task == -1 && c.child != q[0].child:
				q[1] = p.quickPickOf(ag, c, vs.s)
			}
		}
		if res.picks[1][1].task != -1 {
			// Both found for the open kind means both for the other.
			break
		}
	}
	return res
}

// quickPickOf is c as a pick of one task on ag for s.
func (p *planner) quickPickOf(ag *agent, c quickCand, s *shape) quickPick {
	return quickPick{task: c.task, newest: p.tasks[c.task].startNs, child: c.child,
		spare: p.spareFor(pick{ag: ag, tasks: []int{int(c.task)}}, s.res)}
}
