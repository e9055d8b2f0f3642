package scenario

import (
	"math"
	"slices"
)

// Dynamic H-DRF oracle: the rescaling rules, literal (the H-DRF paper's
// Algorithms 2-4) and scale-down (docs/hdrf.md), written straight from
// their definitions, one whole task at a time on a single pool, with the allocator's tie rule (relative
// tolerance 1e-9, then tree order). Used in lock step with the allocator to
// tell implementation bugs from properties of the rules themselves.

type rnode struct {
	name     string
	w        float64
	children []*rnode
	leaf     bool
	demand   []float64
	u, v     []float64
	s        float64
	nb       bool
}

type ruleOracle struct {
	literal bool
	capv    []float64
	free    []float64
	root    *rnode
	leaves  []*rnode
	byName  map[string]*rnode
	tasks   map[string]int64
}

// newRuleOracle loads s (every leaf must have unlimited tasks).
func newRuleOracle(s Spec, literal bool) *ruleOracle {
	names := resourceNames(s)
	o := &ruleOracle{literal: literal, byName: map[string]*rnode{}, tasks: map[string]int64{}}
	for _, n := range names {
		o.capv = append(o.capv, float64(s.Capacity[n]))
	}
	var build func(n Node) *rnode
	build = func(n Node) *rnode {
		w := n.Weight
		if w == 0 {
			w = 1
		}
		x := &rnode{name: n.Name, w: w, u: make([]float64, len(names))}
		if len(n.Children) == 0 {
			x.leaf = true
			for _, rn := range names {
				x.demand = append(x.demand, float64(n.Demand[rn]))
			}
			o.leaves = append(o.leaves, x)
			o.byName[n.Name] = x
			return x
		}
		for _, c := range n.Children {
			x.children = append(x.children, build(c))
		}
		return x
	}
	o.root = build(s.Root)
	o.free = slices.Clone(o.capv)
	return o
}

// inY: j is available when the free amount reaches the smallest positive
// per-task demand for j among pending leaves (1 when none).
func (o *ruleOracle) inY(j int) bool {
	thr := 0.0
	for _, l := range o.leaves {
		if x := l.demand[j]; x > 0 && (thr == 0 || x < thr) {
			thr = x
		}
	}
	if thr == 0 {
		thr = 1
	}
	return o.free[j] >= thr
}

func (o *ruleOracle) share(v []float64, overY bool) float64 {
	m := 0.0
	for j, x := range v {
		if x == 0 || (overY && !o.inY(j)) {
			continue
		}
		m = max(m, x/o.capv[j])
	}
	return m
}

// update is UpdateS: post-order (V, s, nb).
func (o *ruleOracle) update(n *rnode) {
	if n.leaf {
		n.v = n.u
		n.s = o.share(n.v, o.literal)
		n.nb = true // unlimited tasks: pending
		for j, x := range n.demand {
			if x > 0 && !o.inY(j) {
				n.nb = false
			}
		}
		return
	}
	t := math.Inf(1)
	for _, c := range n.children {
		o.update(c)
		if c.nb {
			t = min(t, c.s/c.w)
		}
	}
	n.nb = !math.IsInf(t, 1)
	n.v = make([]float64, len(o.capv))
	for _, c := range n.children {
		f := 1.0
		if n.nb && c.s > 0 && (!o.literal || c.nb) {
			f = math.Min(1, t*c.w/c.s)
		}
		for j, x := range c.v {
			n.v[j] += f * x
		}
	}
	n.s = o.share(n.v, o.literal)
}

func (o *ruleOracle) fits(n *rnode) bool {
	if n.leaf {
		for j, x := range n.demand {
			if x > o.free[j] {
				return false
			}
		}
		return true
	}
	for _, c := range n.children {
		if o.fits(c) {
			return true
		}
	}
	return false
}

// fill gives one task at a time to the leaf Alloc's walk reaches.
func (o *ruleOracle) fill() {
	for {
		o.update(o.root)
		n := o.root
		for n != nil && !n.leaf {
			var best *rnode
			for _, c := range n.children {
				if !o.fits(c) {
					continue
				}
				if best == nil {
					best = c
					continue
				}
				kc, kb := c.s/c.w, best.s/best.w
				if math.Abs(kc-kb) > 1e-9*math.Max(kc, kb) && kc < kb {
					best = c
				}
			}
			n = best
		}
		if n == nil {
			return
		}
		for j, x := range n.demand {
			o.free[j] -= x
			n.u[j] += x
		}
		o.tasks[n.name]++
	}
}

func (o *ruleOracle) complete(leaf string) {
	l := o.byName[leaf]
	for j, x := range l.demand {
		o.free[j] += x
		l.u[j] -= x
	}
	o.tasks[leaf]--
}

func (o *ruleOracle) counts() []int64 {
	out := make([]int64, 0, len(o.leaves))
	for _, l := range o.leaves {
		out = append(out, o.tasks[l.name])
	}
	return out
}

// withCapacity returns s on another capacity.
func withCapacity(s Spec, capacity map[string]int64) Spec {
	s.Capacity = map[string]int64{}
	for k, v := range capacity {
		s.Capacity[k] = v
	}
	return s
}
