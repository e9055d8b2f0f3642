package offers

// pick is a set of victims on one agent that makes room for one task.
type pick struct {
	ag    *agent
	tasks []int // indices into planner.tasks
	// warned are warned tasks there the pick counts as room, and short
	// what it and they make room for.
	warned []int
	short  vec
	// tier is the depth of the victims' farthest common ancestor with the
	// need: higher is nearer kin.
	tier int
	// sure counts non-revocable victims; newest is the latest start among
	// them, in Unix nanoseconds.
	sure   int
	newest int64
	// spare is how many more tasks of the shape the room left there holds.
	spare int64
}

// better orders picks: nearer kin, then fewer tasks, then fewer
// non-revocable ones, then the most room left for the need's next tasks,
// then the most recently started; ties keep the earlier agent.
func (c pick) better(o pick) bool {
	switch {
	case c.tier != o.tier:
		return c.tier > o.tier
	case len(c.tasks) != len(o.tasks):
		return len(c.tasks) < len(o.tasks)
	case c.sure != o.sure:
		return c.sure < o.sure
	case c.spare != o.spare:
		return c.spare > o.spare
	}
	return c.newest > o.newest
}

// spareFor is how many more tasks of v fit on c's agent once c's victims
// and warned tasks are gone and one task of v runs there.
func (p *planner) spareFor(c pick, v vec) int64 {
	free := p.free(c.ag)
	n := int64(-1)
	for j, x := range v {
		if x <= 0 {
			continue
		}
		room := free.at(j) - x
		for _, i := range c.tasks {
			room += p.tasks[i].res.at(j)
		}
		for _, i := range c.warned {
			room += p.tasks[i].res.at(j)
		}
		if k := max(0, room) / x; n < 0 || k < n {
			n = k
		}
	}
	return max(n, 0)
}

// candidate is a task that may be taken for a need, with its kinship tier.
type candidate struct {
	i    int
	tier int
}

// pickOn chooses the fewest victims on ag that free short (room for one
// task there), from the nearest kin that suffice; partial settles, when
// nothing there frees all of short, for as much of it as the candidates
// protection lets go of.
func (p *planner) pickOn(ag *agent, n *need, short vec, partial bool) (pick, bool) {
	if short.isZero() {
		return pick{}, false
	}
	cands := p.cands[:0]
	var total vec
	top := -1
	for _, i := range p.onAgent(ag) {
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
		top = max(top, tier)
	}
	p.cands = cands
	if len(cands) == 0 {
		return pick{}, false
	}
	if total.fits(short) {
		for tier := top; tier >= 0; tier-- {
			if c, ok := p.pickOne(ag, cands, tier, short); ok {
				return c, true
			}
			if c, ok := p.pickTier(ag, cands, tier, short, false); ok {
				return c, true
			}
		}
	}
	if partial {
		return p.pickTier(ag, cands, 0, short, true)
	}
	return pick{}, false
}

// pickOne is what pickTier picks when a candidate of the tier or nearer
// holds all of short alone: its greedy takes first the first such one
// protection lets go of (it covers the most), and needs nothing more.
func (p *planner) pickOne(ag *agent, cands []candidate, tier int, short vec) (pick, bool) {
	for _, c := range cands {
		t := &p.tasks[c.i]
		if c.tier < tier || !t.res.fits(short) || !t.Revocable && !p.protected(t, c.tier) {
			continue
		}
		one := pick{ag: ag, tasks: []int{c.i}, tier: tier, newest: t.startNs}
		if !t.Revocable {
			one.sure = 1
		}
		return one, true
	}
	return pick{}, false
}

// pickTier picks greedily among the candidates of kinship tier or nearer:
// at each step the task covering most of what is still short (the
// preferred one among equals), each checked against the protection of its
// roles given the ones before; then drops any the others make unneeded.
// partial keeps what it got when no candidate left may be taken.
func (p *planner) pickTier(ag *agent, cands []candidate, tier int, short vec, partial bool) (pick, bool) {
	var sum vec
	for _, c := range cands {
		if c.tier >= tier {
			sum = sum.add(p.tasks[c.i].res)
		}
	}
	if !partial && !sum.fits(short) {
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
			if partial && len(chosen) > 0 {
				break
			}
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
	if left.isZero() {
		chosen = p.prune(chosen, short)
	}
	c := pick{ag: ag, tasks: chosen, tier: tier}
	for _, i := range chosen {
		t := &p.tasks[i]
		if !t.Revocable {
			c.sure++
		}
		c.newest = max(c.newest, t.startNs)
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
	tier, ok := p.fwTier(t.f, n)
	if !ok || n.revocableOnly && !t.Revocable {
		return 0, false
	}
	return tier, true
}

// fwTier is eligible for f's tasks but the revocable rule: never the
// need's own frameworks, nor, for a need that is no guarantee's, one under
// a role short of its guarantee. It is kept for the plan by need.
func (p *planner) fwTier(f *framework, n *need) (int, bool) {
	if n.tierOf == nil {
		n.tierOf = make([]int16, len(p.a.fwByIdx))
		for i := range n.tierOf {
			n.tierOf[i] = tierUnknown
		}
	}
	if c := n.tierOf[f.idx]; c != tierUnknown {
		return int(c), c >= 0
	}
	tier := -1
	leaf := f.leaf
	if _, own := n.ancestors[leaf]; !own && !leaf.under(n.node) && (n.guarantee || !p.underShortGuarantee(f)) {
		for x := leaf.parent; x != nil; x = x.parent {
			if d, ok := n.ancestors[x]; ok {
				tier = d
				break
			}
		}
	}
	if tier > n.maxTier {
		tier = -1
	}
	n.tierOf[f.idx] = int16(tier)
	return tier, tier >= 0
}

// tierUnknown marks a framework fwTier has not looked at.
const tierUnknown = -2

// underShortGuarantee reports whether a role above f is short of its
// guarantee in some resource it names: what its tasks free goes back to it
// first (the guarantee phase of a round) and leaves the headroom of unmet
// guarantees as it was, so no need but a guarantee's takes them.
func (p *planner) underShortGuarantee(f *framework) bool {
	if len(p.a.guaranteedRoles) == 0 {
		return false
	}
	if p.shortGuar == nil {
		p.shortGuar = make([]int8, len(p.a.fwByIdx))
	}
	if c := p.shortGuar[f.idx]; c != 0 {
		return c > 0
	}
	var c int8 = -1
	for x := f.leaf.parent; x != nil && c < 0; x = x.parent {
		if shortOfGuarantee(x) {
			c = 1
		}
	}
	p.shortGuar[f.idx] = c
	return c > 0
}

// shortOfGuarantee reports whether x holds less than its guarantee in
// some resource it names.
func shortOfGuarantee(x *node) bool {
	for j, ok := range x.guaranteed {
		if ok && x.held.at(j) < x.guar[j] {
			return true
		}
	}
	return false
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
