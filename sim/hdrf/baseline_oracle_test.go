package hdrf

import (
	"math"
	"math/rand/v2"
	"slices"
)

// baselineOracle replays a scenario under one of the baseline policies
// (naive, collapsed, mesos) as docs/hdrf.md defines them, one task at a
// time on one pool of capacity, with none of the allocator's machinery:
// no caches, no views, no offers. The churn completes a running task
// chosen at random and refills, as the replay does, but with its own
// random stream, so the two agree where the policy has a steady state
// under churn and differ by the task in flight where it oscillates.
//
// The definitions, from the policy table of docs/hdrf.md:
//   - naive: an internal node's vector is the plain sum of its leaves';
//     shares are dominant over every resource; from the root down, the
//     child with the least share over weight among those with a leaf
//     whose task fits is served.
//   - mesos: naive, but a role's frameworks (the leaves) are compared
//     unweighted.
//   - collapsed: a leaf's weight is the product, along its path, of its
//     weight over the sum of its siblings' (every leaf here always has
//     tasks pending, so every sibling is demanding); the leaf with the
//     least dominant share over that weight among those whose task fits
//     is served.
//
// Ties go to the node first in the file, as the allocator orders by
// creation.
type baselineOracle struct {
	policy string
	res    []string // resource names
	cap    []float64
	free   []float64
	root   *oracleNode
	leaves []*oracleNode
}

type oracleNode struct {
	name   string
	weight float64
	kids   []*oracleNode
	demand []float64 // per task, leaves only
	alloc  []float64 // the subtree's plain sum
	tasks  int64
	// collapsed is the leaf's weight under collapsed.
	collapsed float64
	path      []*oracleNode // root's child first, the leaf last
}

func newBaselineOracle(sc Scenario, policy string) *baselineOracle {
	o := &baselineOracle{policy: policy}
	for name := range sc.Capacity {
		o.res = append(o.res, name)
	}
	slices.Sort(o.res)
	for _, name := range o.res {
		o.cap = append(o.cap, sc.Capacity[name])
	}
	o.free = slices.Clone(o.cap)
	o.root = o.build(sc.Root, nil, 1)
	return o
}

func (o *baselineOracle) build(n Node, path []*oracleNode, collapsed float64) *oracleNode {
	w := 1.0
	if n.Weight != nil {
		w = *n.Weight
	}
	node := &oracleNode{name: n.Name, weight: w, alloc: make([]float64, len(o.res)), collapsed: collapsed}
	node.path = append(slices.Clone(path), node)
	if len(n.Children) == 0 {
		for _, r := range o.res {
			node.demand = append(node.demand, n.Demand[r])
		}
		o.leaves = append(o.leaves, node)
		return node
	}
	sum := 0.0
	for _, c := range n.Children {
		sum += weightOf(c)
	}
	for _, c := range n.Children {
		node.kids = append(node.kids, o.build(c, node.path, collapsed*weightOf(c)/sum))
	}
	return node
}

func weightOf(n Node) float64 {
	if n.Weight != nil {
		return *n.Weight
	}
	return 1
}

func (o *baselineOracle) dominant(v []float64) float64 {
	d := 0.0
	for i, x := range v {
		if o.cap[i] > 0 {
			d = max(d, x/o.cap[i])
		}
	}
	return d
}

// fits reports whether a task of leaf fits what is free; slack absorbs
// sums of fractional demands (0.01 GPUs) that float arithmetic leaves a
// hair short.
func (o *baselineOracle) fits(leaf *oracleNode) bool {
	for i, d := range leaf.demand {
		if d > o.free[i]+1e-9 {
			return false
		}
	}
	return true
}

// next is the leaf the policy serves, or nil when no task fits.
func (o *baselineOracle) next() *oracleNode {
	if o.policy == "collapsed" {
		var best *oracleNode
		bestKey := math.Inf(1)
		for _, l := range o.leaves {
			if k := o.dominant(l.alloc) / l.collapsed; o.fits(l) && k < bestKey-1e-12 {
				best, bestKey = l, k
			}
		}
		return best
	}
	n := o.root
	for len(n.kids) > 0 {
		var best *oracleNode
		bestKey := math.Inf(1)
		for _, c := range n.kids {
			if !o.anyFits(c) {
				continue
			}
			w := c.weight
			if o.policy == "mesos" && len(c.kids) == 0 {
				w = 1 // frameworks within a role: unweighted
			}
			if k := o.dominant(c.alloc) / w; k < bestKey-1e-12 {
				best, bestKey = c, k
			}
		}
		if best == nil {
			return nil
		}
		n = best
	}
	return n
}

func (o *baselineOracle) anyFits(n *oracleNode) bool {
	if len(n.kids) == 0 {
		return o.fits(n)
	}
	return slices.ContainsFunc(n.kids, o.anyFits)
}

func (o *baselineOracle) add(leaf *oracleNode, sign float64) {
	for i, d := range leaf.demand {
		o.free[i] -= sign * d
		for _, n := range leaf.path {
			n.alloc[i] += sign * d
		}
	}
	leaf.tasks += int64(sign)
}

func (o *baselineOracle) fill() {
	for l := o.next(); l != nil; l = o.next() {
		o.add(l, 1)
	}
}

// churn completes n tasks, each chosen uniformly among those running,
// refilling after each.
func (o *baselineOracle) churn(n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed^0x5eed, seed))
	for range n {
		total := int64(0)
		for _, l := range o.leaves {
			total += l.tasks
		}
		if total == 0 {
			return
		}
		k := rng.Int64N(total)
		for _, l := range o.leaves {
			if k < l.tasks {
				o.add(l, -1)
				break
			}
			k -= l.tasks
		}
		o.fill()
	}
}

// counts is the running tasks of each leaf, in file order.
func (o *baselineOracle) counts() []int64 {
	var out []int64
	for _, l := range o.leaves {
		out = append(out, l.tasks)
	}
	return out
}
