package offers

import (
	"encoding/binary"
	"slices"
)

// CRV steering in the allocation round (docs/phoenix.md,
// "CRV in the allocator"). H-DRF still decides who receives each unit: on
// every agent the walk takes the eligible framework with the lowest
// weighted share, exactly as without the CRV. The CRV only chooses the
// order in which agents take their turns, which the round otherwise picks
// arbitrarily (a rotating cursor), and which of a framework's own shapes a
// unit is sized for:
//
//  1. A class steers the round when a declared fair shape uses it, some but
//     not all agents satisfy it and its ratio reaches Config.CRVMinRatio.
//     Agents that satisfy no steering class ("plain" agents) take their
//     turns first, in the rotating order; then the agents that satisfy one
//     ("scarce" agents), least contended first: by the highest ratio among
//     their steering classes, ascending, ties in the rotating order. So
//     unconstrained demand is served by the least contended agents first,
//     and scarce agents reach it only when the plain ones could not serve
//     it; what they have left goes, by H-DRF, to the demand that needs them.
//  2. On a scarce agent, a framework whose turn it is takes one of its
//     shapes that needs a steering class, when one fits, before its other
//     shapes (in declaration order within each group).
//
// Both are orders among choices H-DRF already allows, so shares are those
// of plain H-DRF; nothing is held back, so no resource idles because of
// the CRV.

// crvRound is the CRV state of one allocation round.
type crvRound struct {
	on    bool     // some class steers this round
	order []*agent // agent turn order when on
	plain int      // agents before this index in order are plain
	// scores are the contended classes' distinct ratios, ascending, and
	// buckets the scarce agents of each, in position order (scratch).
	scores  []float64
	buckets [][]*agent
}

// crvGroup is the agents that satisfy the same classes. An agent's place
// in a steered round depends on nothing else, so a round works it out
// once per group (as of round), not once per agent and class.
type crvGroup struct {
	classes []*crvClass
	round   uint64
	score   float64
	scarce  bool
	// bucket is the group's place among the round's scores.
	bucket int
}

// crvGroupOf is ag's group, found again if its classes changed.
func (a *Allocator) crvGroupOf(ag *agent) *crvGroup {
	if g := ag.crvGroup; g != nil {
		return g
	}
	key := make([]byte, 0, 8*len(ag.classes))
	for _, c := range ag.classes {
		key = binary.LittleEndian.AppendUint64(key, c.seq)
	}
	if a.crv.groups == nil || len(a.crv.groups) > 4*len(a.agentList)+64 {
		// Groups no agent is in any more go; agents keep theirs.
		a.crv.groups = map[string]*crvGroup{}
	}
	g := a.crv.groups[string(key)]
	if g == nil {
		g = &crvGroup{classes: slices.Clone(ag.classes)}
		a.crv.groups[string(key)] = g
	}
	ag.crvGroup = g
	return g
}

// crvPrepare decides, at the start of a round whose agent turns start at
// start, which classes steer and the agents' turn order. With no
// constraint classes it costs one length check. A placement other than
// spread orders the turns itself (placement.go), and packing weighs the
// agents constrained work leans on, so nothing steers then.
func (a *Allocator) crvPrepare(start int) {
	r := &a.crv.turn
	r.on = false
	if a.cfg.DisableCRV || len(a.crv.list) == 0 || a.cfg.Placement != PlacementSpread && a.cfg.Placement != "" {
		return
	}
	for _, c := range a.crv.list {
		c.ratio, _ = c.dominantRatio()
		c.contended = a.steers(c, c.ratio)
		r.on = r.on || c.contended
	}
	if !r.on {
		return
	}
	// Scarce agents by score, then position: the scores are the few
	// contended classes' ratios, so the agents are bucketed by score in
	// position order rather than sorted one by one.
	r.scores = r.scores[:0]
	for _, c := range a.crv.list {
		if c.contended && !slices.Contains(r.scores, c.ratio) {
			r.scores = append(r.scores, c.ratio)
		}
	}
	slices.Sort(r.scores)
	r.buckets = slices.Grow(r.buckets[:0], len(r.scores))[:len(r.scores)]
	for k := range r.buckets {
		r.buckets[k] = r.buckets[k][:0]
	}
	n := len(a.agentList)
	groups := a.crvGroups()
	r.order = r.order[:0]
	a.crv.round++
	for i, at := 0, start; i < n; i, at = i+1, at+1 {
		if at == n {
			at = 0 // rotating without a division per agent
		}
		g := groups[at]
		if g.round != a.crv.round {
			g.round, g.score, g.scarce = a.crv.round, 0, false
			for _, c := range g.classes {
				if c.contended {
					g.score, g.scarce = max(g.score, c.ratio), true
				}
			}
			if g.scarce {
				// Ratios are never negative or NaN, so a scarce group's
				// score is one of the scores; the bound only keeps an
				// index in range whatever happens.
				k, _ := slices.BinarySearch(r.scores, g.score)
				g.bucket = min(k, len(r.buckets)-1)
			}
		}
		if g.scarce {
			r.buckets[g.bucket] = append(r.buckets[g.bucket], a.agentList[at])
			continue
		}
		r.order = append(r.order, a.agentList[at])
	}
	r.plain = len(r.order)
	for _, b := range r.buckets {
		r.order = append(r.order, b...)
	}
}

// crvGroups is, by agent index, each agent's group, found again after the
// agents or their classes changed. Reading it costs a round no visit to
// every agent's record.
func (a *Allocator) crvGroups() []*crvGroup {
	if a.crv.groupsAt != a.crv.classesVer || len(a.crv.groupOf) != len(a.agentList) {
		a.crv.groupsAt = a.crv.classesVer
		a.crv.groupOf = a.crv.groupOf[:0]
		for _, ag := range a.agentList {
			a.crv.groupOf = append(a.crv.groupOf, a.crvGroupOf(ag))
		}
	}
	return a.crv.groupOf
}

// steered reports whether s needs a class that steers this round.
func (s *shape) steered() bool {
	for _, c := range s.cls {
		if c.contended {
			return true
		}
	}
	if !s.relaxed {
		for _, c := range s.softCls {
			if c.contended {
				return true
			}
		}
	}
	return false
}
