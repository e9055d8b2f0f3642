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
	thr      vec   // per resource threshold (>= 1)
	cnt      []int // per resource: agents whose free amount reaches thr
	y        []bool
	thrStale bool
	// col is, per resource, each agent's free amount by agent index
	// (math.MinInt64 for a draining agent), side by side so that counting
	// again after a threshold moved reads one array; nil when it must be
	// built again from the agents.
	col [][]int64
}

func (av *availability) init() { av.thrStale = true }

func (av *availability) grow(n int) {
	for len(av.thr) < n {
		av.thr = append(av.thr, 1)
		av.cnt = append(av.cnt, 0)
		av.y = append(av.y, false)
	}
}

func (av *availability) agentAdded(ag *agent) {
	av.grow(len(ag.free))
	for j := range av.thr {
		if ag.free.at(j) >= av.thr[j] {
			av.cnt[j]++
		}
		av.set(ag.idx, j, ag.free.at(j))
	}
}

func (av *availability) agentRemoved(ag *agent) {
	for j := range av.thr {
		if ag.free.at(j) >= av.thr[j] {
			av.cnt[j]--
		}
		av.set(ag.idx, j, math.MinInt64)
	}
}

// agentsMoved records that agents changed places in the agent list.
func (av *availability) agentsMoved() { clear(av.col) }

// adjust records that agent idx's free amount of resource j went from old
// to next.
func (av *availability) adjust(idx, j int, old, next int64) {
	if was, is := old >= av.thr[j], next >= av.thr[j]; was != is {
		av.cnt[j] += btoi(is) - btoi(was)
	}
	av.set(idx, j, next)
}

// set records agent idx's free amount of resource j in its column, or
// drops the column when it does not reach that far.
func (av *availability) set(idx, j int, x int64) {
	if j >= len(av.col) {
		return
	}
	switch c := av.col[j]; {
	case idx < len(c):
		c[idx] = x
	case idx == len(c) && c != nil:
		av.col[j] = append(c, x)
	default:
		av.col[j] = nil
	}
}

// column is resource j's column, built again from the agents if dropped.
func (a *Allocator) column(j int) []int64 {
	av := &a.avail
	for len(av.col) <= j {
		av.col = append(av.col, nil)
	}
	if c := av.col[j]; c != nil && len(c) == len(a.agentList) {
		return c
	}
	c := av.col[j][:0]
	for _, ag := range a.agentList {
		x := ag.free.at(j)
		if ag.draining {
			x = math.MinInt64
		}
		c = append(c, x)
	}
	av.col[j] = c
	return c
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
		av.thrStale = false
		thr := make(vec, len(av.thr))
		for _, r := range a.shapes.list {
			for j, x := range r.res {
				if x > 0 && (thr[j] == 0 || x < thr[j]) {
					thr[j] = x
				}
			}
		}
		for j := range thr {
			if thr[j] == 0 {
				thr[j] = 1
			}
		}
		// Only the resources whose threshold moved are counted again.
		var moved []int
		for j := range thr {
			if thr[j] != av.thr[j] {
				moved = append(moved, j)
			}
		}
		av.thr = thr
		for _, j := range moved {
			n := 0
			for _, x := range a.column(j) {
				if x >= thr[j] {
					n++
				}
			}
			av.cnt[j] = n
		}
	}
	changed := false
	for j := range av.y {
		is := av.cnt[j] > 0
		if is != av.y[j] {
			av.y[j] = is
			changed = true
		}
	}
	if changed {
		a.ver++
	}
}
