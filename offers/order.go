package offers

import (
	"slices"
	"sort"
)

// sortedFanout is the number of children from which a node keeps them in
// sorted order instead of scanning them all on every pick.
const sortedFanout = 8

// orderBefore is the exact order of a sorted children list.
func orderBefore(xk float64, xs uint64, yk float64, ys uint64) bool {
	if xk != yk {
		return xk < yk
	}
	return xs < ys
}

// ensureOrder brings n.order up to date: a full sort when the evaluation
// version moved (capacity or availability changed every key), otherwise
// only the children whose subtree changed since are moved. The order holds
// child indices rather than pointers so moving them costs no write barriers.
func (a *Allocator) ensureOrder(n *node) {
	if n.orderVer != a.ver || len(n.order) != len(n.children) {
		n.order = n.order[:0]
		for i, c := range n.children {
			a.eval(c)
			c.sortKey = c.key
			n.order = append(n.order, int32(i))
		}
		slices.SortFunc(n.order, func(x, y int32) int {
			cx, cy := n.children[x], n.children[y]
			if orderBefore(cx.sortKey, cx.seq, cy.sortKey, cy.seq) {
				return -1
			}
			return 1
		})
		n.orderVer = a.ver
		n.stale = n.stale[:0]
		return
	}
	for _, c := range n.stale {
		if c.parent != n {
			continue
		}
		a.eval(c)
		if c.key == c.sortKey {
			continue
		}
		from := a.position(n, c)
		if from < 0 {
			n.orderVer = 0
			a.ensureOrder(n)
			return
		}
		c.sortKey = c.key
		before := func(k int) bool {
			o := n.children[n.order[k]]
			return orderBefore(c.sortKey, c.seq, o.sortKey, o.seq)
		}
		idx := n.order[from]
		if from > 0 && before(from-1) {
			// Moves toward the front: shift [to, from) right by one.
			to := sort.Search(from, before)
			copy(n.order[to+1:from+1], n.order[to:from])
			n.order[to] = idx
			continue
		}
		// Moves toward the back: shift (from, to) left by one.
		to := from + 1 + sort.Search(len(n.order)-from-1, func(k int) bool { return before(from + 1 + k) })
		copy(n.order[from:to-1], n.order[from+1:to])
		n.order[to-1] = idx
	}
	n.stale = n.stale[:0]
}

// position finds c in n.order by its sort key.
func (a *Allocator) position(n *node, c *node) int {
	i := sort.Search(len(n.order), func(k int) bool {
		o := n.children[n.order[k]]
		return !orderBefore(o.sortKey, o.seq, c.sortKey, c.seq)
	})
	if i < len(n.order) && n.children[n.order[i]] == c {
		return i
	}
	for k, idx := range n.order {
		if n.children[idx] == c {
			return k
		}
	}
	return -1
}

// pickSorted is pick's scan for wide nodes: the first eligible child in
// sorted order wins, unless a later eligible child ties with it and was
// created earlier.
func (a *Allocator) pickSorted(n *node, t *turn) *node {
	a.ensureOrder(n)
	var best *node
	i := 0
	for ; i < len(n.order); i++ {
		if c := n.children[n.order[i]]; a.eligible(c, t) {
			best = c
			break
		}
	}
	if best == nil {
		return nil
	}
	// Children with exactly best's key come later only with a larger seq;
	// only a child whose key is above best's but within the tie tolerance can
	// still win, so jump past the exact ties and check the near ones.
	at := func(k int) *node { return n.children[n.order[k]] }
	j := i + sort.Search(len(n.order)-i, func(k int) bool { return at(i+k).sortKey > best.sortKey })
	for ; j < len(n.order) && tied(at(j).sortKey, best.sortKey); j++ {
		if c := at(j); c.seq < best.seq && a.eligible(c, t) {
			best = c
		}
	}
	return best
}

// eligible applies pick's cheap filters to a child, stamping leaves that
// cannot use the agent as dead for the rest of the turn.
func (a *Allocator) eligible(c *node, t *turn) bool {
	if c.dead == a.stamp || !t.hasWork(c) {
		return false
	}
	if c.isLeaf() && !a.leafFits(c, t) {
		c.dead = a.stamp
		return false
	}
	return true
}
