package offers

import "math"

// availability tracks Y, the set of resources still available to pending
// work, which decides whether a leaf is blocked in dynamic H-DRF.
//
// Resource j is in Y when some agent's free amount of j is at least the
// smallest positive per-task demand for j among pending shapes
// (docs/hdrf.md): a fragment smaller than every pending task behaves
// as saturated. Y is computed over the whole cluster rather than per agent,
// so the annotated tree stays valid from one agent to the next and only a
// change of Y forces a full re-evaluation.
type availability struct {
	thr      vec // per resource threshold (>= 1)
	y        []bool
	thrStale bool
	// most is, per resource, a tree of the agents' free amounts: leaf
	// n+i is agent i's (math.MinInt64 for a draining agent or none), each
	// inner node the larger of its two children, so the root is the most
	// any agent has free and Y follows a threshold's move without
	// counting again; nil when it must be built again from the agents.
	most [][]int64
	// moved says that some agent's most free amount may have changed
	// since Y was last brought up to date.
	moved bool
}

func (av *availability) init() { av.thrStale = true }

func (av *availability) grow(n int) {
	for len(av.thr) < n {
		av.thr = append(av.thr, 1)
		av.y = append(av.y, false)
		av.moved = true
	}
}

func (av *availability) agentAdded(ag *agent) {
	av.grow(len(ag.free))
	for j := range av.thr {
		av.set(ag.idx, j, ag.free.at(j))
	}
}

func (av *availability) agentRemoved(ag *agent) {
	for j := range av.thr {
		av.set(ag.idx, j, math.MinInt64)
	}
}

// agentsMoved records that agents changed places in the agent list.
func (av *availability) agentsMoved() { clear(av.most); av.moved = true }

// set records agent idx's free amount of resource j in its tree, or drops
// the tree when it has no leaf for idx.
func (av *availability) set(idx, j int, x int64) {
	if j >= len(av.most) || av.most[j] == nil {
		av.moved = true
		return
	}
	t := av.most[j]
	n := len(t) / 2
	if idx >= n {
		av.most[j], av.moved = nil, true
		return
	}
	k := n + idx
	t[k] = x
	for k /= 2; k >= 1; k /= 2 {
		m := max(t[2*k], t[2*k+1])
		if t[k] == m {
			return
		}
		t[k] = m
	}
	av.moved = true
}

// mostFree is the most of resource j any agent not draining has free
// (math.MinInt64 with none), its tree built again if dropped.
func (a *Allocator) mostFree(j int) int64 {
	av := &a.avail
	for len(av.most) <= j {
		av.most = append(av.most, nil)
	}
	t := av.most[j]
	if t == nil || len(t)/2 < len(a.agentList) {
		n := 1
		for n < len(a.agentList) {
			n *= 2
		}
		t = reuse(&av.most[j], 2*n)
		for k := range t {
			t[k] = math.MinInt64
		}
		for i, ag := range a.agentList {
			if !ag.draining {
				t[n+i] = ag.free.at(j)
			}
		}
		for k := n - 1; k >= 1; k-- {
			t[k] = max(t[2*k], t[2*k+1])
		}
	}
	return t[1]
}

func (av *availability) demandChanged() { av.thrStale = true }

// in reports whether resource j is in Y (valid after sync).
func (av *availability) in(j int) bool { return j < len(av.y) && av.y[j] }

// sync brings Y up to date and bumps the allocator's evaluation version
// when it changed.
func (a *Allocator) syncAvail() {
	av := &a.avail
	av.grow(len(a.reg.names))
	if av.thrStale {
		av.thrStale, av.moved = false, true
		clear(av.thr)
		for _, r := range a.shapes.list {
			for j, x := range r.res {
				if x > 0 && (av.thr[j] == 0 || x < av.thr[j]) {
					av.thr[j] = x
				}
			}
		}
		for j := range av.thr {
			if av.thr[j] == 0 {
				av.thr[j] = 1
			}
		}
	}
	if !av.moved {
		return
	}
	av.moved = false
	changed := false
	for j := range av.y {
		is := a.mostFree(j) >= av.thr[j]
		if is != av.y[j] {
			av.y[j] = is
			changed = true
		}
	}
	if changed {
		a.ver++
	}
}
