package offers

import (
	"slices"

	"github.com/allot-project/allot/protocol"
)

// phase is the step of an agent's turn in an allocation round.
type phase uint8

const (
	phaseFair      phase = iota // declared demand, one task unit at a time
	phaseLeftover               // optional demand, on what the fair phase left
	phaseRemainder              // frameworks without declared demand
	phaseGuarantee              // declared demand of roles short of their guarantee, before the fair phase
)

// turn is the state of one agent's turn in an allocation round.
type turn struct {
	ag      *agent
	phase   phase
	targets bool                     // static policy: only shapes below their static target
	scarce  bool                     // the agent satisfies a class that steers this round
	kept    bool                     // the agent is kept for large tasks this round (reserve.go)
	holders []*node                  // the roles room is held for, in their phase (preempt_hold.go)
	built   map[*framework]*building // fair and remainder offers
	spare   map[*framework]*building // leftover offers
	offers  []*building              // every offer, in the order it was started
	hardOK  map[*shape]bool          // constraint results for this agent
	shapeOf map[*node]*shape         // shape accepted per leaf in the current pick
}

// building is an offer being assembled during a turn.
type building struct {
	fw    *framework
	kind  Kind
	res   vec
	ports protocol.Ranges
	units map[string]int64
	n     int64
	whole bool // a remainder offer
}

// hasWork reports whether n's subtree has leaves the current phase serves.
func (t *turn) hasWork(n *node) bool {
	switch t.phase {
	case phaseFair:
		return n.demanding > 0
	case phaseGuarantee:
		return n.demanding > 0 && (n.guarBelow > 0 || n.guaranteedAbove())
	}
	return n.open > 0
}

// pick descends from n to the leaf that receives the next unit on the
// turn's agent, or returns nil when nothing under n can use it. At each
// level it takes the eligible child with the lowest weighted share; a
// subtree found empty is stamped dead for the rest of the turn, because the
// agent's free resources only shrink while the turn lasts.
func (a *Allocator) pick(n *node, t *turn) *node {
	for {
		if len(n.children) >= sortedFanout {
			best := a.pickSorted(n, t)
			if best == nil {
				n.dead = a.stamp
				return nil
			}
			if best.isLeaf() {
				return best
			}
			if leaf := a.pick(best, t); leaf != nil {
				return leaf
			}
			continue
		}
		var best *node
		evaluated := false
		for _, c := range n.children {
			if c.dead == a.stamp || !t.hasWork(c) {
				continue
			}
			if c.isLeaf() && !a.leafFits(c, t) {
				c.dead = a.stamp
				continue
			}
			if best == nil {
				best = c
				continue
			}
			if !evaluated {
				a.eval(best)
				evaluated = true
			}
			a.eval(c)
			if a.less(c, best) {
				best = c
			}
		}
		if best == nil {
			n.dead = a.stamp
			return nil
		}
		if best.isLeaf() {
			return best
		}
		if leaf := a.pick(best, t); leaf != nil {
			return leaf
		}
	}
}

// pickFlat is the collapsed-hierarchy walk: every leaf competes directly,
// ordered by dominant share over its collapsed weight.
func (a *Allocator) pickFlat(t *turn) *node {
	var best *node
	var bestKey float64
	for _, l := range a.collapsed.leaves {
		if l.dead == a.stamp || !t.hasWork(l) {
			continue
		}
		if !a.leafFits(l, t) {
			l.dead = a.stamp
			continue
		}
		a.eval(l)
		k := l.s / a.collapsed.weight[l]
		if best == nil || k < bestKey-tieTolerance*bestKey || (k <= bestKey+tieTolerance*bestKey && l.seq < best.seq) {
			best, bestKey = l, k
		}
	}
	return best
}

// leafFits reports whether the leaf's framework can take something from
// the agent in this phase, remembering which shape it would take.
func (a *Allocator) leafFits(l *node, t *turn) bool {
	f := l.fw
	if f.suppressed || a.refused(t, f) || !t.heldFor(l) {
		return false
	}
	if t.phase == phaseRemainder {
		_, got := t.built[f]
		return f.open() && !got
	}
	if b, ok := t.built[f]; ok && b.whole {
		return false
	}
	var first *shape
	for _, s := range f.shapes {
		if s.pending() == 0 || !t.ag.free.fits(s.res) || !devicesFit(t.ag.free, t.ag.gpuDims, s.gpu) || !a.withinLimits(f, s.res) {
			continue
		}
		if t.phase == phaseGuarantee && !a.owed(f, s.res) {
			continue
		}
		if s.ports > 0 && t.ag.freePorts.Count() < s.ports {
			continue
		}
		if t.targets && f.launched[s.key]+s.offered >= a.static.target(f, s) {
			continue
		}
		if t.kept && !s.large() {
			continue
		}
		if s.constrained() && !a.hardOn(t, s) {
			continue
		}
		if t.scarce && !s.steered() {
			// A shape that needs this scarce agent goes first (crvround.go).
			if first == nil {
				first = s
			}
			continue
		}
		t.shapeOf[l] = s
		return true
	}
	if first == nil {
		return false
	}
	t.shapeOf[l] = first
	return true
}

// hardOn reports whether t.ag satisfies the hard constraints of s, and
// its soft ones until they relax (crvsoft.go). Fair shapes answer from
// their constraint classes, which know their agents (crv.go); other shapes
// evaluate their constraints once per turn.
func (a *Allocator) hardOn(t *turn, s *shape) bool {
	if len(s.cls) == len(s.hard) && len(s.softCls) == len(s.soft) {
		return inClasses(t.ag, s.cls) && (s.relaxed || inClasses(t.ag, s.softCls))
	}
	ok, seen := t.hardOK[s]
	if !seen {
		ok = protocol.HoldHard(s.hard, t.ag.info.Attributes)
		if ok && !s.relaxed {
			ok = softOK(s.soft, t.ag.info.Attributes)
		}
		t.hardOK[s] = ok
	}
	return ok
}

// inClasses reports whether ag satisfies every class in cs.
func inClasses(ag *agent, cs []*crvClass) bool {
	for _, c := range cs {
		if !slices.Contains(ag.classes, c) {
			return false
		}
	}
	return true
}
