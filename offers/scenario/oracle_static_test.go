package scenario

import (
	"math/big"
	"slices"
	"sort"

	"github.com/allot-project/allot/offers"
)

// Static H-DRF oracle: Algorithm 1 by whole tasks, plain sums, weighted
// dominant shares compared exactly, ties to the leftmost child.

type onode struct {
	name     string
	w        *big.Rat
	children []*onode
	parent   *onode
	demand   []int64
	left     int64
	u        []int64
	key      *big.Rat // dominant share of u over w
	done     bool
}

// staticOracle returns the discrete static H-DRF allocation of s (single
// pool of s.Capacity), in tasks per leaf name.
func staticOracle(s Spec) map[string]int64 {
	names := resourceNames(s)
	capv := make([]int64, len(names))
	for j, n := range names {
		capv[j] = s.Capacity[n]
	}
	var build func(n Node, parent *onode) *onode
	build = func(n Node, parent *onode) *onode {
		w := n.Weight
		if w == 0 {
			w = 1
		}
		o := &onode{name: n.Name, w: new(big.Rat).SetFloat64(w), parent: parent,
			u: make([]int64, len(names)), key: new(big.Rat)}
		if len(n.Children) == 0 {
			o.demand = make([]int64, len(names))
			for j, rn := range names {
				o.demand[j] = n.Demand[rn]
			}
			o.left = n.Tasks
			return o
		}
		for _, c := range n.Children {
			o.children = append(o.children, build(c, o))
		}
		return o
	}
	root := build(s.Root, nil)
	free := slices.Clone(capv)
	fits := func(d []int64) bool {
		for j, x := range d {
			if x > free[j] {
				return false
			}
		}
		return true
	}
	rekey := func(o *onode) {
		best := new(big.Rat)
		for j, x := range o.u {
			if capv[j] > 0 && x > 0 {
				if q := big.NewRat(x, capv[j]); q.Cmp(best) > 0 {
					best = q
				}
			}
		}
		o.key = best.Quo(best, o.w)
	}
	var descend func(o *onode) *onode
	descend = func(o *onode) *onode {
		if o.done {
			return nil
		}
		if o.children == nil {
			if o.left > 0 && fits(o.demand) {
				return o
			}
			o.done = true
			return nil
		}
		for {
			var best *onode
			for _, c := range o.children {
				if !c.done && (best == nil || c.key.Cmp(best.key) < 0) {
					best = c
				}
			}
			if best == nil {
				o.done = true
				return nil
			}
			if l := descend(best); l != nil {
				return l
			}
		}
	}
	out := map[string]int64{}
	for _, l := range leafNodes(s) {
		out[l.Name] = 0
	}
	for {
		l := descend(root)
		if l == nil {
			return out
		}
		if l.left != offers.Unlimited {
			l.left--
		}
		for j, x := range l.demand {
			free[j] -= x
		}
		for n := l; n.parent != nil; n = n.parent {
			for j, x := range l.demand {
				n.u[j] += x
			}
			rekey(n)
		}
		out[l.name]++
	}
}

// oracleCounts is staticOracle in tree order.
func oracleCounts(s Spec) []int64 {
	m := staticOracle(s)
	var out []int64
	for _, l := range leafNodes(s) {
		out = append(out, m[l.Name])
	}
	return out
}

func resourceNames(s Spec) []string {
	names := make([]string, 0, len(s.Capacity))
	for n := range s.Capacity {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
