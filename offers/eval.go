package offers

import (
	"math"
	"slices"
)

// tieTolerance is the relative difference below which two weighted shares
// count as equal, so that rescaling round-off never decides a tie.
const tieTolerance = 1e-9

// weightOf is the weight a node is compared with among its siblings.
// Mesos's framework sorter has no weights, so under PolicyMesos frameworks
// within a role compare unweighted.
func (a *Allocator) weightOf(n *node) float64 {
	if a.rules.unweightedLeaves && n.isLeaf() {
		return 1
	}
	return n.weight
}

// less orders evaluated siblings: lower weighted share first, ties (within
// tieTolerance) to the earlier-created node.
func (a *Allocator) less(x, y *node) bool {
	if tied(x.key, y.key) {
		return x.seq < y.seq
	}
	return x.key < y.key
}

// tied reports whether two keys are equal within tieTolerance.
func tied(x, y float64) bool {
	return math.Abs(x-y) <= tieTolerance*math.Max(math.Abs(x), math.Abs(y))
}

// share is the dominant share of v over the cluster capacity; in the
// paper-literal mode only resources in Y count.
func (a *Allocator) share(v []float64, overY bool) float64 {
	s := 0.0
	for j, x := range v {
		r := a.capacity.at(j)
		if r <= 0 || x == 0 {
			continue
		}
		if overY && !a.avail.in(j) {
			continue
		}
		if q := x / float64(r); q > s {
			s = q
		}
	}
	return s
}

// eval brings n's cached vector, share and non-blocked flag up to date.
//
// Leaves hold their allocation (running plus offered). Internal nodes
// combine their children according to the policy (docs/hdrf.md):
// plain sums for static, naive, mesos and collapsed; the scale-down rule for
// dynamic; the paper's literal rule for paper.
func (a *Allocator) eval(n *node) {
	if !n.dirty && n.ver == a.ver {
		return
	}
	prev, prevS, prevLevel, prevStep := n.v, n.s, n.level, n.step
	m := len(a.reg.names)
	if cap(n.spare) < m {
		n.v = make([]float64, m)
	} else {
		n.v = n.spare[:m]
		clear(n.v)
	}
	n.spare = prev
	mode := a.rules.rescale
	if n.isLeaf() {
		f := n.fw
		for j := range n.v {
			n.v[j] = float64(f.alloc.at(j))
		}
		n.s = a.share(n.v, mode == rescaleLiteral)
		n.nb = mode != rescalePlain && a.leafNonBlocked(f)
		n.step = a.taskShare(f, n.s)
	} else {
		for _, c := range n.children {
			a.eval(c)
		}
		if mode == rescalePlain {
			for _, c := range n.children {
				for j, x := range c.v {
					n.v[j] += x
				}
			}
			n.nb = false
		} else {
			a.combineRescaled(n, mode)
		}
		n.s = a.share(n.v, mode == rescaleLiteral)
	}
	n.key = n.s / a.weightOf(n)
	n.dirty = false
	n.ver = a.ver
	if a.contentChanged(n, prev, prevS, prevLevel, prevStep) {
		a.evalSeq++
		n.evalSeq, n.capSeq = a.evalSeq, a.capSeq
	}
}

// contentChanged reports whether a re-evaluation changed what n's
// whole-task fill is made of (view.go): its vector, share, level or task,
// a child's content, or the cluster's capacity. Re-evaluations that change
// none of them (Y changed elsewhere in the tree) keep n's walk.
func (a *Allocator) contentChanged(n *node, prev []float64, s, level, step float64) bool {
	if n.evalSeq == 0 || n.capSeq != a.capSeq || n.s != s || n.step != step ||
		(n.level != level && !(math.IsNaN(n.level) && math.IsNaN(level))) || !slices.Equal(n.v, prev) {
		return true
	}
	for _, c := range n.children {
		if c.evalSeq > n.evalSeq {
			return true
		}
	}
	return false
}

// combineRescaled builds n's vector from its children with a rescaling
// rule. t is the lowest weighted share among non-blocked children.
//
// Under scale-down every child above t (blocked or not) is replaced by the
// vector it held, in whole tasks, when its weighted share first reached t
// (view.go): a leaf at the fewest of its tasks that reach t, a group at that
// state of its own whole-task fill. Children at or below t,
// which blocked earlier, count as they are. Under the paper's literal rule
// only non-blocked children are scaled, by a scalar, and blocked ones enter
// unscaled.
func (a *Allocator) combineRescaled(n *node, mode rescale) {
	t := math.Inf(1)
	for _, c := range n.children {
		if c.nb && c.key < t {
			t = c.key
		}
	}
	n.nb = !math.IsInf(t, 1)
	n.level = t
	for _, c := range n.children {
		if n.nb && c.s > 0 && c.key > t {
			switch {
			case mode == rescaleScaleDown:
				// The product is rounded first so no fused multiply-add
				// can make two replicas differ.
				a.addView(c, float64(t*a.weightOf(c)), n.v)
				continue
			case mode == rescaleLiteral && c.nb:
				f := float64(t*a.weightOf(c)) / c.s
				for j, x := range c.v {
					n.v[j] += float64(f * x)
				}
				continue
			}
		}
		for j, x := range c.v {
			n.v[j] += x
		}
	}
}

// leafNonBlocked: a leaf is non-blocked when it is demanding and every
// resource its pending shapes need is in Y; a framework without declared
// demand is non-blocked while anything is available.
func (a *Allocator) leafNonBlocked(f *framework) bool {
	if f.open() {
		for j := range a.avail.y {
			if a.avail.y[j] {
				return true
			}
		}
		return false
	}
	if !f.demanding() {
		return false
	}
	for _, s := range f.shapes {
		if s.pending() == 0 {
			continue
		}
		for j, x := range s.res {
			if x > 0 && !a.avail.in(j) {
				return false
			}
		}
	}
	return true
}
