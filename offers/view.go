package offers

import (
	"math"
	"slices"
	"sort"
)

// Whole-task views for scale-down rescaling.
//
// Scale-down replaces a child that stands above its parent's level t by
// what it held when its weighted share first reached t. Static H-DRF hands
// out whole tasks, lowest level first, so "what it held" is a state of the
// child's own whole-task fill: every task triggered below that level is
// there, none above. A leaf's k-th task is triggered when its share passes
// that of k-1 tasks; a group's state changes when one of its children's
// does, at the group level where that child's share (over its weight)
// passes the share of its previous state. Scaling by fractions of tasks
// instead sees a group whose children are staggered by one task (as every
// whole-task fill leaves them) at its laggard's level, smaller than any
// state it passed through, so a group took the last units of a resource
// from a single leaf that static H-DRF gives them to. And since a group's
// states hold its children's real mixes, no scalar rescale distorts a group
// whose members blocked at different levels.
//
// A group's view is found by walking its fill backwards from its vector:
// drop the latest-triggered tasks until the state before would fall below
// the share asked for. Each group keeps its walk (the states passed so far)
// until its content changes, and a parent's walk reads its child groups'
// states from theirs, so no state of a group is computed twice per change.
// Fills usually stand within a state or two of their parent's level, so
// walks are short; a view far below jumps there (jump).

// viewTie is the relative tolerance under which trigger levels and shares
// count as equal, so that round-off never splits one level's tasks.
const viewTie = 1e-9

// addView adds to out child c's whole-task view at share y (y < c.s).
func (a *Allocator) addView(c *node, y float64, out []float64) {
	if c.s <= 0 || y <= 0 {
		return // the fill's first state, empty, already reaches y
	}
	if c.isLeaf() {
		f := c.leafViewShare(y) / c.s
		for j, x := range c.v {
			out[j] += float64(f * x)
		}
		return
	}
	r, i := a.walkTo(c, y)
	for j, x := range r.state(c, i) {
		out[j] += x
	}
}

// wholeTasks is the share of the fewest tasks of share step that reach y.
// The product is rounded explicitly so that no fused multiply-add, where a
// caller subtracts from it, can make two replicas differ.
func wholeTasks(y, step float64) float64 {
	return float64(math.Ceil(y/step-viewTie) * step)
}

// leafViewShare is the share of leaf n's whole-task state at share y: the
// fewest of its tasks that reach y, at most what it holds.
func (n *node) leafViewShare(y float64) float64 { return math.Min(n.s, wholeTasks(y, n.step)) }

// leafPrev is the share of the whole-task state before a leaf's state at
// share x: one task fewer, -1 before the empty state.
func leafPrev(x, step float64) float64 {
	if x <= 0 {
		return -1
	}
	return math.Max(0, wholeTasks(x, step)-step)
}

// A group's walk is kept in runs. A run is a stretch of consecutive states
// of the fill, walked back from its first; the first run starts at the
// group's vector. A view far below every run (a role that saturated one
// resource long ago, viewed at its siblings' level in another) starts a new
// run at the level found by bisection instead of walking every state in
// between.
type walkCache struct {
	ver  uint64
	runs []*walkRun // by first share, highest first
}

// walkRun is a stretch of consecutive states: shares[i] and vecs[i] are
// the i-th (vecs[0] of the first run is nil: the node's vector, whose
// buffer is reused on re-evaluation), fill stands at the last.
type walkRun struct {
	shares []float64
	vecs   [][]float64
	fill   *groupFill
}

// maxWalk is how many states a view walks on from the nearest run before
// it jumps.
const maxWalk = 8

// walkOf returns c's walk, started afresh when c's content changed.
func (a *Allocator) walkOf(c *node) *walkCache {
	w := &c.walk
	if w.ver != c.evalSeq || len(w.runs) == 0 {
		*w = walkCache{ver: c.evalSeq}
		w.runs = append(w.runs, &walkRun{shares: []float64{c.s}, vecs: [][]float64{nil}, fill: a.newGroupFill(c, math.Inf(1))})
	}
	return w
}

// state is the vector of state i of run r of c.
func (r *walkRun) state(c *node, i int) []float64 {
	if r.vecs[i] == nil {
		return c.v
	}
	return r.vecs[i]
}

// before returns the share of the state after state i of r, walking one
// step further when needed; -1 when state i is the empty one.
func (r *walkRun) before(i int) float64 {
	if i+1 < len(r.shares) {
		return r.shares[i+1]
	}
	p := r.fill.prev()
	if p < 0 {
		return -1
	}
	r.fill.drop()
	r.shares = append(r.shares, p)
	r.vecs = append(r.vecs, r.fill.cur)
	return p
}

// walkTo returns the run and index of c's first state (from the empty one
// up) whose share reaches y.
func (a *Allocator) walkTo(c *node, y float64) (*walkRun, int) {
	w := a.walkOf(c)
	floor := y * (1 - viewTie)
	// The nearest run that starts at or above y.
	k := sort.Search(len(w.runs), func(k int) bool { return w.runs[k].shares[0] < floor }) - 1
	r := w.runs[max(k, 0)]
	i := sort.Search(len(r.shares), func(i int) bool { return r.shares[i] < floor }) - 1
	i = max(i, 0)
	for steps := 0; i == len(r.shares)-1; steps++ {
		p := r.before(i)
		if p < 0 || p < floor {
			return r, i
		}
		if steps == maxWalk {
			return a.jump(c, y)
		}
		i++
	}
	return r, i
}

// jump starts a run at c's first state whose share reaches y: the state
// of the fill at the lowest group level whose state reaches y, found by
// bisection (states change only where a child's does, so the level found
// sits just above one of those changes).
func (a *Allocator) jump(c *node, y float64) (*walkRun, int) {
	floor := y * (1 - viewTie)
	lo, hi := 0.0, 0.0
	for _, d := range c.children {
		if d.s > 0 {
			hi = math.Max(hi, d.s/a.weightOf(d))
		}
	}
	for it := 0; it < 64 && hi-lo > viewTie*hi; it++ {
		mid := lo + (hi-lo)/2
		if a.share(a.stateAt(c, mid), false) >= floor {
			hi = mid
		} else {
			lo = mid
		}
	}
	g := a.newGroupFill(c, hi)
	r := &walkRun{shares: []float64{a.share(g.cur, false)}, vecs: [][]float64{g.cur}, fill: g}
	w := a.walkOf(c)
	k := sort.Search(len(w.runs), func(k int) bool { return w.runs[k].shares[0] < r.shares[0] })
	w.runs = slices.Insert(w.runs, k, r)
	i := 0
	for p := r.before(i); p >= 0 && p >= floor; p = r.before(i) {
		i++
	}
	return r, i
}

// stateAt is c's state when its level was tau: each child at the state
// it stood at then.
func (a *Allocator) stateAt(c *node, tau float64) []float64 {
	out := make([]float64, len(c.v))
	for _, d := range c.children {
		if d.s <= 0 {
			continue
		}
		var v []float64
		switch sh := a.shareAtLevel(c, d, tau); {
		case sh >= d.s:
			v = d.v
		case d.isLeaf():
			v = (&leafFill{n: d, x: d.leafViewShare(sh)}).vec()
		default:
			r, i := a.walkTo(d, sh)
			v = r.state(d, i)
		}
		for j, x := range v {
			out[j] += x
		}
	}
	return out
}

// shareAtLevel is the share child d of n stood at when n's level was tau:
// children n counts whole climb to their own share, the others stop at n's
// level.
func (a *Allocator) shareAtLevel(n, d *node, tau float64) float64 {
	if d.key > n.level {
		tau = math.Min(tau, n.level)
	}
	return math.Min(d.s, float64(tau*a.weightOf(d)))
}

// plainBelow is the share of the state before n's vector in n's fill.
func (a *Allocator) plainBelow(n *node) float64 { return a.walkOf(n).runs[0].before(0) }

// taskShare is the share of f's largest task (declared shapes first, else
// what it runs); a framework with neither holds one task, of share s.
func (a *Allocator) taskShare(f *framework, s float64) float64 {
	st := 0.0
	for _, sh := range f.shapes {
		st = math.Max(st, a.shareOf(sh.res))
	}
	if st == 0 {
		for _, r := range f.launchRes {
			st = math.Max(st, a.shareOf(r))
		}
	}
	if st == 0 {
		return s
	}
	return st
}

// shareOf is the dominant share of an integer vector.
func (a *Allocator) shareOf(v vec) float64 {
	s := 0.0
	for j, x := range v {
		if r := a.capacity.at(j); r > 0 && x > 0 {
			s = math.Max(s, float64(x)/float64(r))
		}
	}
	return s
}
