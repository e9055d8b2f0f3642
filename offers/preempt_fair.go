package offers

import (
	"maps"
	"math"
	"slices"
)

// preemptFairShares returns every role's and framework's fair share as
// preemption judges it: static H-DRF by whole tasks over the cluster's
// capacity, each framework asking for the tasks it runs, its pending fair
// demand and its optional tasks (a suppressed framework only what it runs;
// one without declared demand what it runs, which it evidently wants). A
// role's share is the sum of its frameworks'. The result is cached until
// demand, usage, capacity or the tree change.
func (a *Allocator) preemptFairShares() map[*node]vec {
	if !a.fair.allStale && a.fair.all != nil {
		return a.fair.all
	}
	a.fair.allStale = false
	a.fair.all = preemptFill(a.tree.root, a.capacity, func(f *framework) []fillShape {
		var out []fillShape
		add := func(key string, r vec, count int64) {
			if r.isZero() || count <= 0 {
				return
			}
			for i := range out {
				if out[i].key == key {
					out[i].left = addCount(out[i].left, count)
					return
				}
			}
			out = append(out, fillShape{key: key, res: r, left: count})
		}
		if f.declared && !f.suppressed {
			for _, s := range f.shapes {
				add(s.key, s.res, s.count)
			}
			for _, s := range f.optional {
				add(s.key, s.res, s.count)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(f.launched)) {
			add(key, f.launchRes[key], f.launched[key])
		}
		return out
	})
	return a.fair.all
}

// fillKeyed mirrors a tree node during preemptFill. A parent keeps its
// children's keys (fillKey of their share) and creation orders side by
// side, so that choosing a child reads no child. The tail fields serve
// unwind (preempt_unwind.go).
type fillKeyed struct {
	src      *node
	children []*fillKeyed
	parent   *fillKeyed
	pos      int // index among the parent's children
	u        vec
	shapes   []fillShape
	done     bool
	keys     []float64
	seqs     []uint64
	tail
}

// preemptFill is staticFill (static.go) making the same choices, with each
// node's key computed once per change instead of at every comparison; it
// returns what every node with anything holds at the end (a framework's
// leaf: its tasks' sum; a role: its frameworks'). When everything asked
// fits, that is every ask; when most of it does, unwind reaches the point
// where the first task stops fitting without placing tasks one by one.
func preemptFill(root *node, capacity vec, shapesOf func(*framework) []fillShape) map[*node]vec {
	froot := buildFill(root, nil, 0, shapesOf)
	all, total, ok := asks(froot)
	if ok && capacity.fits(total) {
		return all
	}
	return fillFrom(froot, capacity, ok && unwindPays(capacity, total))
}

// buildFill mirrors the tree under n for the fill.
func buildFill(n *node, parent *fillKeyed, pos int, shapesOf func(*framework) []fillShape) *fillKeyed {
	fn := &fillKeyed{src: n, parent: parent, pos: pos}
	if n.isLeaf() {
		fn.shapes = shapesOf(n.fw)
		return fn
	}
	k := len(n.children)
	fn.children = make([]*fillKeyed, 0, k)
	fn.keys, fn.seqs = make([]float64, k), make([]uint64, k)
	for i, c := range n.children {
		fn.children = append(fn.children, buildFill(c, fn, i, shapesOf))
		fn.seqs[i] = c.seq
	}
	return fn
}

// shareOver returns the dominant share of a vector over capacity.
func shareOver(capacity vec) func(vec) float64 {
	return func(u vec) float64 {
		s := 0.0
		for j, x := range u {
			if r := capacity.at(j); r > 0 {
				if q := float64(x) / float64(r); q > s {
					s = q
				}
			}
		}
		return s
	}
}

// fillFrom runs the fill on froot, first unwinding to the first task that
// does not fit when unwinding is set (every ask finite).
func fillFrom(froot *fillKeyed, capacity vec, unwinding bool) map[*node]vec {
	share := shareOver(capacity)
	if unwinding {
		unwind(froot, capacity, share)
	}
	var setKeys func(n *fillKeyed)
	setKeys = func(n *fillKeyed) {
		for i, c := range n.children {
			n.keys[i] = fillKey(share(c.u), c.src.weight)
			setKeys(c)
		}
	}
	setKeys(froot)
	free := capacity.clone().sub(froot.u)
	markDone := func(n *fillKeyed) {
		n.done = true
		if n.parent != nil {
			n.parent.keys[n.pos] = math.Inf(1)
		}
	}
	// pick is the child staticFill's less chooses: the least key (a done
	// child's is infinite), the earliest created among equals.
	pick := func(n *fillKeyed) int {
		best := -1
		for i, k := range n.keys {
			if math.IsInf(k, 1) {
				continue
			}
			if best < 0 || k < n.keys[best] || k == n.keys[best] && n.seqs[i] < n.seqs[best] {
				best = i
			}
		}
		return best
	}
	// descend finds the leaf and shape the next task goes to, marking
	// done the nodes where nothing fits.
	descend := func() (*fillKeyed, int) {
		n := froot
		for {
			if n.done {
				if n.parent == nil {
					return nil, -1
				}
				n = n.parent
				continue
			}
			if n.src.isLeaf() {
				for i, s := range n.shapes {
					if s.left > 0 && free.fits(s.res) {
						return n, i
					}
				}
				markDone(n)
				continue
			}
			best := pick(n)
			if best < 0 {
				markDone(n)
				continue
			}
			n = n.children[best]
		}
	}
	for {
		leaf, i := descend()
		if leaf == nil {
			break
		}
		s := &leaf.shapes[i]
		if s.left != Unlimited {
			s.left--
		}
		free = free.sub(s.res)
		for n := leaf; n != nil; n = n.parent {
			n.u = n.u.add(s.res)
			if n.parent != nil {
				n.parent.keys[n.pos] = fillKey(share(n.u), n.src.weight)
			}
		}
	}
	all := map[*node]vec{}
	var collect func(n *fillKeyed)
	collect = func(n *fillKeyed) {
		if n.u.isZero() {
			return
		}
		all[n.src] = n.u
		for _, c := range n.children {
			collect(c)
		}
	}
	collect(froot)
	return all
}

// asks sums what every node under root asks for, and the whole; ok is
// false when an ask is unlimited or the sums would overflow. When the
// whole fits the capacity at once, every task fits when its turn comes,
// so each framework's fair share is all it asks for, whatever the order.
func asks(root *fillKeyed) (all map[*node]vec, total vec, ok bool) {
	all = map[*node]vec{}
	var sum func(n *fillKeyed) (vec, bool)
	sum = func(n *fillKeyed) (vec, bool) {
		var u vec
		add := func(r vec, k int64) bool {
			u = u.grow(len(r))
			for j, x := range r {
				if x > 0 && k > (math.MaxInt64-u[j])/x {
					return false
				}
				u[j] += x * k
			}
			return true
		}
		for _, s := range n.shapes {
			if s.left == Unlimited || !add(s.res, s.left) {
				return nil, false
			}
		}
		for _, c := range n.children {
			if cu, ok := sum(c); !ok || !add(cu, 1) {
				return nil, false
			}
		}
		if !u.isZero() {
			all[n.src] = u
		}
		return u, true
	}
	total, ok = sum(root)
	return all, total, ok
}
