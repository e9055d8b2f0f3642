package offers

// The fill gives each task to the leaf reached by taking, at every node,
// the child with the least key (fillKey: ties to the earliest created).
// A child's key only rises as its subtree receives tasks, and its own
// order does not depend on its siblings' while every task fits, so until
// the first task that does not fit, a node's order is the merge of its
// children's orders by key. Unwinding walks that merge backwards: give
// every node all it asks for, then take back the task that came last,
// again and again, until the whole fits the capacity. What remains is
// exactly what the fill places before its first task that does not fit,
// reached in as many steps as tasks taken back instead of placed.

// tail is what unwind keeps of a node in the fill.
type tail struct {
	held    int64   // tasks in the subtree
	lastAt  int     // the child, or in a leaf the shape, holding the last
	lastRes vec     // the last task's resources
	lastKey float64 // the node's key just before the last was placed
	asked   []int64 // a leaf's shapes' counts before unwinding
}

// unwindPays reports whether unwinding takes back fewer tasks than the
// fill would place one by one: it estimates the tasks taken back from the
// largest overshoot of any resource, as if tasks were alike.
func unwindPays(capacity, total vec) bool {
	over := 0.0
	for j, x := range total {
		if r := capacity.at(j); x > r {
			over = max(over, float64(x-r)/float64(x))
		}
	}
	return over < 0.5
}

// unwind leaves every node of the fill holding what the fill holds just
// before its first task that does not fit: u and the leaves' counts left.
// Every ask must be finite and its sum must not overflow (asks).
func unwind(root *fillKeyed, capacity vec, share func(vec) float64) {
	var scratch vec
	retail := func(n *fillKeyed) {
		if n.held == 0 {
			n.lastRes = nil
			return
		}
		if n.src.isLeaf() {
			for i := len(n.shapes) - 1; i >= 0; i-- {
				if n.shapes[i].left < n.asked[i] {
					n.lastAt, n.lastRes = i, n.shapes[i].res
					break
				}
			}
		} else {
			best := -1
			for i, c := range n.children {
				if c.held == 0 {
					continue
				}
				if best < 0 {
					best = i
					continue
				}
				b := n.children[best]
				if c.lastKey > b.lastKey || c.lastKey == b.lastKey && c.src.seq > b.src.seq {
					best = i
				}
			}
			n.lastAt, n.lastRes = best, n.children[best].lastRes
		}
		scratch = append(scratch[:0], n.u...)
		n.lastKey = fillKey(share(scratch.sub(n.lastRes)), n.src.weight)
	}
	var fill func(n *fillKeyed)
	fill = func(n *fillKeyed) {
		if n.src.isLeaf() {
			n.asked = make([]int64, len(n.shapes))
			for i := range n.shapes {
				s := &n.shapes[i]
				n.asked[i] = s.left
				n.u = n.u.grow(len(s.res))
				for j, x := range s.res {
					n.u[j] += x * s.left
				}
				n.held += s.left
				s.left = 0
			}
		}
		for _, c := range n.children {
			fill(c)
			n.u = n.u.add(c.u)
			n.held += c.held
		}
		retail(n)
	}
	fill(root)
	for root.held > 0 && !capacity.fits(root.u) {
		n := root
		for !n.src.isLeaf() {
			n = n.children[n.lastAt]
		}
		s := &n.shapes[n.lastAt]
		s.left++
		for m := n; m != nil; m = m.parent {
			m.u = m.u.sub(s.res)
			m.held--
			retail(m)
		}
	}
}
