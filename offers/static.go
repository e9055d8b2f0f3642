package offers

import "math"

// staticTargets caches the static H-DRF allocation that PolicyStatic steers
// toward: per framework, how many tasks of each declared shape it should run.
type staticTargets struct {
	stale   bool
	targets map[*framework]map[string]int64
}

func (st *staticTargets) target(f *framework, s *shape) int64 {
	return st.targets[f][s.key]
}

// refresh recomputes the targets when demand or capacity changed.
func (st *staticTargets) refresh(a *Allocator) {
	if !st.stale && st.targets != nil {
		return
	}
	st.stale = false
	st.targets = staticFill(a.tree.root, a.capacity, func(f *framework) []fillShape {
		if f.suppressed || !f.declared {
			return nil
		}
		out := make([]fillShape, 0, len(f.shapes))
		for _, s := range f.shapes {
			if s.res.isZero() {
				// No scalar share to fill (ports only): such shapes are
				// served by the plain-share pass after the targets.
				continue
			}
			total := s.count
			if total != Unlimited {
				total += f.launched[s.key]
			}
			out = append(out, fillShape{key: s.key, res: s.res, left: total})
		}
		return out
	})
}

// fillShape is a task shape in the static water-filling.
type fillShape struct {
	key  string
	res  vec
	left int64
}

// fillNode mirrors a tree node during the static water-filling.
type fillNode struct {
	src      *node
	children []*fillNode
	parent   *fillNode
	u        vec // plain sum of the subtree's allocation
	shapes   []fillShape
	done     bool // nothing in the subtree fits any more
}

// staticFill runs static H-DRF (the paper's Algorithm 1) by whole tasks on
// a single pool of the given capacity, starting from nothing: repeatedly
// walk from the root taking, at each level, the child with the lowest
// weighted dominant share of its plain-sum vector among children whose
// subtree holds a task that fits the free pool, and give the leaf reached
// one task of its first fitting shape. It returns tasks per framework and
// shape key. It is the reference definition every other policy is checked
// against, and costs O(tasks x depth x fan-out).
func staticFill(root *node, capacity vec, shapesOf func(*framework) []fillShape) map[*framework]map[string]int64 {
	var build func(n *node, parent *fillNode) *fillNode
	build = func(n *node, parent *fillNode) *fillNode {
		fn := &fillNode{src: n, parent: parent}
		if n.isLeaf() {
			fn.shapes = shapesOf(n.fw)
			return fn
		}
		for _, c := range n.children {
			fn.children = append(fn.children, build(c, fn))
		}
		return fn
	}
	froot := build(root, nil)
	free := capacity.clone()
	out := map[*framework]map[string]int64{}
	share := func(u vec) float64 {
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
	less := func(x, y *fillNode) bool {
		kx, ky := fillKey(share(x.u), x.src.weight), fillKey(share(y.u), y.src.weight)
		if kx != ky {
			return kx < ky
		}
		return x.src.seq < y.src.seq
	}
	// descend returns a leaf and the index of its shape that fits, marking
	// subtrees done as they run out; the free pool only shrinks, so a done
	// subtree stays done.
	var descend func(n *fillNode) (*fillNode, int)
	descend = func(n *fillNode) (*fillNode, int) {
		if n.done {
			return nil, -1
		}
		if n.src.isLeaf() {
			for i, s := range n.shapes {
				if s.left > 0 && free.fits(s.res) {
					return n, i
				}
			}
			n.done = true
			return nil, -1
		}
		for {
			var best *fillNode
			for _, c := range n.children {
				if !c.done && (best == nil || less(c, best)) {
					best = c
				}
			}
			if best == nil {
				n.done = true
				return nil, -1
			}
			if leaf, i := descend(best); leaf != nil {
				return leaf, i
			}
		}
	}
	for {
		leaf, i := descend(froot)
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
		}
		f := leaf.src.fw
		if out[f] == nil {
			out[f] = map[string]int64{}
		}
		out[f][s.key]++
	}
	return out
}

// fillKeyBits is how many low bits of a key's mantissa fillKey rounds
// away: it keeps 30 bits, a relative precision of about 1e-9, the same
// as tieTolerance.
const fillKeyBits = 22

// fillKey is the weighted dominant share the fill compares siblings by,
// rounded so that shares equal but for floating-point round-off compare
// equal and creation order settles them. Rounding, unlike the tolerance
// rounds compare with, keeps the order transitive and monotone in the
// share, so the fill is a merge of each child's rising keys: preemptFill
// relies on that to take tasks back from the end of the order.
func fillKey(share, weight float64) float64 {
	k := share / weight
	if math.IsInf(k, 0) || math.IsNaN(k) || k <= 0 {
		return k
	}
	b := math.Float64bits(k)
	b = (b + 1<<(fillKeyBits-1)) &^ (1<<fillKeyBits - 1)
	return math.Float64frombits(b)
}
