package offers

import "math"

// freeIndex finds the first agent, in order, whose free resources (as the
// plan has used them) hold a vector: a binary tree over the agents whose
// every node keeps, per resource, the most any agent under it has free.
type freeIndex struct {
	width, size int
	max         []int64 // node k's entries are max[k*width : (k+1)*width]
}

func newFreeIndex(p *planner) freeIndex {
	fi := freeIndex{width: len(p.a.reg.names), size: 1}
	for fi.size < len(p.a.agentList) {
		fi.size *= 2
	}
	fi.max = reuse(&p.a.preempt.bufs.freeMax, 2*fi.size*fi.width)
	for k := range fi.max {
		fi.max[k] = math.MinInt64
	}
	for i, ag := range p.a.agentList {
		fi.put(i, p.free(ag))
	}
	for k := fi.size - 1; k >= 1; k-- {
		fi.pull(k)
	}
	return fi
}

// put sets agent i's leaf.
func (fi *freeIndex) put(i int, v vec) {
	leaf := fi.max[(fi.size+i)*fi.width : (fi.size+i+1)*fi.width]
	for j := range leaf {
		leaf[j] = v.at(j)
	}
}

// pull recomputes node k from its children.
func (fi *freeIndex) pull(k int) {
	w := fi.width
	for j := range w {
		fi.max[k*w+j] = max(fi.max[2*k*w+j], fi.max[(2*k+1)*w+j])
	}
}

// set records agent i's free resources.
func (fi *freeIndex) set(i int, v vec) {
	fi.put(i, v)
	for k := (fi.size + i) / 2; k >= 1; k /= 2 {
		fi.pull(k)
	}
}

// first is the first agent at or after from whose free resources hold v,
// or -1.
func (fi *freeIndex) first(from int, v vec) int {
	for j := fi.width; j < len(v); j++ {
		if v[j] > 0 {
			return -1 // a resource no agent has
		}
	}
	return fi.search(1, 0, fi.size, from, v)
}

func (fi *freeIndex) search(k, lo, hi, from int, v vec) int {
	if hi <= from {
		return -1
	}
	node := fi.max[k*fi.width : (k+1)*fi.width]
	for j, x := range v[:min(len(v), fi.width)] {
		if node[j] < x {
			return -1
		}
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if i := fi.search(2*k, lo, mid, from, v); i >= 0 {
		return i
	}
	return fi.search(2*k+1, mid, hi, from, v)
}
