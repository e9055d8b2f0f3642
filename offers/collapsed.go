package offers

// collapsedWeights flattens the tree for PolicyCollapsed: each leaf's
// weight is the product, along its path, of its weight over the summed
// weights of its demanding siblings (itself included), recomputed whenever
// the set of demanding nodes changes (docs/hdrf.md).
type collapsedWeights struct {
	stale  bool
	leaves []*node
	weight map[*node]float64
}

func (cw *collapsedWeights) refresh(a *Allocator) {
	if !cw.stale && cw.weight != nil {
		return
	}
	cw.stale = false
	cw.leaves = a.tree.leaves()
	cw.weight = make(map[*node]float64, len(cw.leaves))
	active := func(n *node) bool { return n.demanding > 0 || n.open > 0 }
	for _, l := range cw.leaves {
		w := 1.0
		for k := l; k.parent != nil; k = k.parent {
			sum := 0.0
			for _, sib := range k.parent.children {
				if sib == k || active(sib) {
					sum += sib.weight
				}
			}
			w *= k.weight / sum
		}
		cw.weight[l] = w
	}
}
