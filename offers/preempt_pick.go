package offers

// pick is a set of victims on one agent that makes room for one task.
type pick struct {
	ag    *agent
	tasks []int // indices into planner.tasks
	// tier is the depth of the victims' farthest common ancestor with the
	// need: higher is nearer kin.
	tier int
	// sure counts non-revocable victims; newest is the latest start among
	// them, in Unix nanoseconds.
	sure   int
	newest int64
}

// better orders picks: nearer kin, then fewer tasks, then fewer
// non-revocable ones, then the most recently started; ties keep the
// earlier agent.
func (c pick) better(o pick) bool {
	switch {
	case c.tier != o.tier:
		return c.tier > o.tier
	case len(c.tasks) != len(o.tasks):
		return len(c.tasks) < len(o.tasks)
	case c.sure != o.sure:
		return c.sure < o.sure
	}
	return c.newest > o.newest
}

// candidate is a task that may be taken for a need, with its kinship tier.
type candidate struct {
	i    int
	tier int
}

// pickOn chooses the fewest victims on ag that make room for one task of
// s, from the nearest kin that suffice.
func (p *planner) pickOn(ag *agent, n *need, s *shape) (pick, bool) {
	short := shortfall(s.res, p.free(ag))
	if short.isZero() {
		return pick{}, false
	}
	var cands []candidate
	var total vec
	for _, i := range p.byAgent[ag.idx] {
		t := &p.tasks[i]
		if t.removed || t.Warned || t.NonPreemptible || !covers(t.res, short) {
			continue
		}
		tier, ok := p.eligible(t, n)
		if !ok {
			continue
		}
		cands = append(cands, candidate{i, tier})
		total = total.add(t.res)
	}
	if len(cands) == 0 || !total.fits(short) {
		return pick{}, false
	}
	for tier := n.maxTier; tier >= 0; tier-- {
		if c, ok := p.pickTier(ag, cands, tier, short); ok {
			return c, true
		}
	}
	return pick{}, false
}

// pickTier picks greedily among the candidates of kinship tier or nearer:
// at each step the task covering most of what is still short (the
// preferred one among equals), each checked against the protection of its
// roles given the ones before; then drops any the others make unneeded.
func (p *planner) pickTier(ag *agent, cands []candidate, tier int, short vec) (pick, bool) {
	var sum vec
	for _, c := range cands {
		if c.tier >= tier {
			sum = sum.add(p.tasks[c.i].res)
		}
	}
	if !sum.fits(short) {
		return pick{}, false
	}
	var chosen []int
	taken := map[int]bool{}
	left := short
	undo := func() {
		for _, i := range chosen {
			if t := &p.tasks[i]; !t.Revocable {
				p.addSure(t.f.leaf, t.res, 1)
			}
		}
	}
	for !left.isZero() {
		best, bestCover := -1, 0.0
		for _, c := range cands {
			if c.tier < tier || taken[c.i] {
				continue
			}
			t := &p.tasks[c.i]
			cv := coverage(t.res, left)
			if cv <= bestCover {
				continue
			}
			if !t.Revocable && !p.protected(t, c.tier) {
				continue
			}
			best, bestCover = c.i, cv
		}
		if best < 0 {
			undo()
			return pick{}, false
		}
		taken[best] = true
		chosen = append(chosen, best)
		if t := &p.tasks[best]; !t.Revocable {
			p.addSure(t.f.leaf, t.res, -1) // the next ones see it gone
		}
		left = shortfall(left, p.tasks[best].res)
	}
	undo()
	chosen = p.prune(chosen, short)
	c := pick{ag: ag, tasks: chosen, tier: tier}
	for _, i := range chosen {
		t := &p.tasks[i]
		if !t.Revocable {
			c.sure++
		}
		c.newest = max(c.newest, t.StartedAt.UnixNano())
	}
	return c, true
}

// prune drops chosen tasks, least preferred first, that the others make
// unneeded.
func (p *planner) prune(chosen []int, short vec) []int {
	for k := len(chosen) - 1; k >= 0 && len(chosen) > 1; k-- {
		var rest vec
		for m, i := range chosen {
			if m != k {
				rest = rest.add(p.tasks[i].res)
			}
		}
		if rest.fits(short) {
			chosen = append(chosen[:k:k], chosen[k+1:]...)
		}
	}
	return chosen
}

// coverage is how much of short r covers: the sum, over the resources
// short lacks, of the part of it r holds.
func coverage(r, short vec) float64 {
	c := 0.0
	for j, x := range short {
		if x > 0 {
			c += float64(min(r.at(j), x)) / float64(x)
		}
	}
	return c
}

// eligible reports whether t may be taken for n, and its kinship tier: the
// depth of its framework's nearest common ancestor with the need.
func (p *planner) eligible(t *planTask, n *need) (int, bool) {
	leaf := t.f.leaf
	if _, own := n.ancestors[leaf]; own || leaf.under(n.node) {
		return 0, false
	}
	if n.revocableOnly && !t.Revocable {
		return 0, false
	}
	for x := leaf.parent; x != nil; x = x.parent {
		if d, ok := n.ancestors[x]; ok {
			return d, true
		}
	}
	return 0, false
}

// protected reports whether taking t keeps every role between its
// framework and the need (the framework's leaf included) at or above its
// guarantee and its fair share of what it runs for sure.
func (p *planner) protected(t *planTask, tier int) bool {
	stop := 0
	for x := t.f.leaf; x != nil && depth(x) > tier; x = x.parent {
		stop++
		if !p.keeps(x, t.res) {
			return false
		}
	}
	return stop > 0
}

// keeps reports whether x, losing r of what it runs for sure, keeps its
// guarantee in every resource r uses and its fair share by dominant share.
func (p *planner) keeps(x *node, r vec) bool {
	left := p.sure[x].clone().sub(r)
	for j, ok := range x.guaranteed {
		if ok && r.at(j) > 0 && left.at(j) < x.guar[j] {
			return false
		}
	}
	return p.a.dom(left)+shareEps >= p.a.dom(p.fair[x])
}
