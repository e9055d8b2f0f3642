package offers

// packGroup is the pending optional work of one unconstrained shape key on
// an agent's leftover turn (or of one constrained shape on its own): the
// (framework, shape) pairs that carry it, in the order the efficiency-first
// tie-break prefers them (the framework's place in SRTF order, then the
// shape's place in its declaration). Every pair of a group fits the agent
// exactly when the first does and has the same alignment with it, so a
// placement compares groups, not frameworks.
type packGroup struct {
	pairs []spareChoice
	head  int // the first pair whose shape may still be pending
	rank  []int
}

// packByAlignment is efficiency-first without a work term (the default,
// Config.LeftoverWorkWeight = 0): it repeatedly places one task of the
// pending optional shape best aligned with t.ag's free resources, ties to
// the earlier framework in SRTF order, then to the shape it declared first.
// It places exactly what the general packer (packEfficient) places with a
// zero weight, but each placement costs one alignment per distinct shape
// rather than per framework and shape, which is what keeps the round cheap
// when many frameworks ask for the same task shapes.
func (a *Allocator) packByAlignment(t *turn, cands []*framework) {
	groups := a.packGroups(t, cands)
	for {
		if t.ag.free.isZero() && len(t.ag.freePorts) == 0 {
			return
		}
		best, bestAlign := -1, 0.0
		for gi := range groups {
			g := &groups[gi]
			for g.head < len(g.pairs) && g.pairs[g.head].s.pending() == 0 {
				g.head++
			}
			if g.head == len(g.pairs) {
				continue
			}
			p := g.pairs[g.head]
			if !a.fitsTurn(t, p.s) || !a.withinLimits(p.f, p.s.res) {
				continue
			}
			x := alignment(t.ag, p.s)
			if best < 0 || x > bestAlign || x == bestAlign && groups[gi].before(&groups[best]) {
				best, bestAlign = gi, x
			}
		}
		if best < 0 {
			return
		}
		p := groups[best].pairs[groups[best].head]
		a.giveSpare(t, p.f, p.s)
	}
}

// before reports whether g's next pair comes before h's in the tie-break
// order.
func (g *packGroup) before(h *packGroup) bool {
	x, y := g.rank[g.head], h.rank[h.head]
	return x < y
}

// packGroups groups the candidates' pending optional shapes for t.ag:
// unconstrained shapes by key, each constrained shape alone (whether it
// fits depends on its own constraints and relaxation). Frameworks filtered
// on the agent are left out.
func (a *Allocator) packGroups(t *turn, cands []*framework) []packGroup {
	groups := a.leftover.groupBuf[:0]
	if a.leftover.groupIdx == nil {
		a.leftover.groupIdx = map[string]int{}
	}
	byKey := a.leftover.groupIdx
	clear(byKey)
	order := 0
	for _, f := range cands {
		if a.refused(t, f) {
			continue
		}
		for _, s := range f.optional {
			order++
			if s.pending() == 0 {
				continue
			}
			gi, ok := -1, false
			if !s.constrained() {
				gi, ok = byKey[s.key]
			}
			if !ok {
				gi = len(groups)
				if gi < cap(groups) {
					groups = groups[:gi+1]
					groups[gi].pairs, groups[gi].rank, groups[gi].head = groups[gi].pairs[:0], groups[gi].rank[:0], 0
				} else {
					groups = append(groups, packGroup{})
				}
				if !s.constrained() {
					byKey[s.key] = gi
				}
			}
			g := &groups[gi]
			g.pairs = append(g.pairs, spareChoice{f: f, s: s})
			g.rank = append(g.rank, order)
		}
	}
	a.leftover.groupBuf = groups
	return groups
}
