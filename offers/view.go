package offers

import (
	"container/heap"
	"math"
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
// states from theirs, so every state of every group is computed once per
// change. Fills usually stand within a state or two of their parent's
// level, so walks are short.

// viewTie is the relative tolerance under which trigger levels and shares
// count as equal, so that round-off never splits one level's tasks.
const viewTie = 1e-9

// addView adds to out child c's whole-task view at share y (y < c.s).
func (a *Allocator) addView(c *node, y float64, out []float64) {
	if c.s <= 0 || y <= 0 {
		return // the fill's first state, empty, already reaches y
	}
	if c.isLeaf() {
		f := math.Min(c.s, wholeTasks(y, c.step)) / c.s
		for j, x := range c.v {
			out[j] += float64(f * x)
		}
		return
	}
	for j, x := range a.walkState(c, a.walkTo(c, y)) {
		out[j] += x
	}
}

// wholeTasks is the share of the fewest tasks of share step that reach y.
func wholeTasks(y, step float64) float64 {
	return math.Ceil(y/step-viewTie) * step
}

// leafPrev is the share of the whole-task state before a leaf's state at
// share x: one task fewer, -1 before the empty state.
func leafPrev(x, step float64) float64 {
	if x <= 0 {
		return -1
	}
	return math.Max(0, wholeTasks(x, step)-step)
}

// walkCache is a group's walk back through its whole-task fill: the states
// passed so far, from the group's vector down (the first is read from the
// node, whose vector buffer is reused on re-evaluation), and the fill that
// goes on.
type walkCache struct {
	ver    uint64
	fill   *groupFill
	shares []float64
	vecs   [][]float64
}

// walkOf returns c's walk, started afresh when c's content changed.
func (a *Allocator) walkOf(c *node) *walkCache {
	w := &c.walk
	if w.ver != c.evalSeq || w.fill == nil {
		*w = walkCache{ver: c.evalSeq, fill: a.newGroupFill(c)}
		w.shares = append(w.shares, c.s)
		w.vecs = append(w.vecs, nil)
	}
	return w
}

// walkState is the vector of c's i-th state back from its vector.
func (a *Allocator) walkState(c *node, i int) []float64 {
	if i == 0 {
		return c.v
	}
	return a.walkOf(c).vecs[i]
}

// stateBefore returns the share of c's state after state i, walking one
// step further when needed; -1 when state i is the empty one.
func (a *Allocator) stateBefore(c *node, i int) float64 {
	w := a.walkOf(c)
	if i+1 < len(w.shares) {
		return w.shares[i+1]
	}
	p := w.fill.prev()
	if p < 0 {
		return -1
	}
	w.fill.drop()
	w.shares = append(w.shares, p)
	w.vecs = append(w.vecs, w.fill.cur)
	return p
}

// walkTo returns the index of c's first state (from the empty one up)
// whose share reaches y.
func (a *Allocator) walkTo(c *node, y float64) int {
	w := a.walkOf(c)
	i := sort.Search(len(w.shares), func(i int) bool { return w.shares[i] < y*(1-viewTie) }) - 1
	i = max(i, 0)
	for i == len(w.shares)-1 {
		if p := a.stateBefore(c, i); p < 0 || p < y*(1-viewTie) {
			break
		}
		i++
	}
	return i
}

// plainBelow is the share of the state before n's vector in n's fill.
func (a *Allocator) plainBelow(n *node) float64 { return a.stateBefore(n, 0) }

// fill steps back through one child's whole-task fill.
type fill interface {
	vec() []float64 // the current state's vector
	prev() float64  // the share of the state before, -1 at the empty state
	drop()          // step back to the state before
}

// leafFill is a leaf's fill at share x.
type leafFill struct {
	n *node
	x float64
}

func (l *leafFill) vec() []float64 {
	out := make([]float64, len(l.n.v))
	f := l.x / l.n.s
	for j, x := range l.n.v {
		out[j] = float64(f * x)
	}
	return out
}

func (l *leafFill) prev() float64 { return leafPrev(l.x, l.n.step) }
func (l *leafFill) drop()         { l.x = l.prev() }

// walkCursor is a child group's fill, read from the group's own walk.
type walkCursor struct {
	a *Allocator
	n *node
	i int
}

func (c *walkCursor) vec() []float64 { return c.a.walkState(c.n, c.i) }
func (c *walkCursor) prev() float64  { return c.a.stateBefore(c.n, c.i) }

func (c *walkCursor) drop() {
	if c.prev() >= 0 {
		c.i++
	}
}

// groupFill is a group's fill. Its children stand one state ahead of it:
// cur is the group's current state, next the one before it, which the
// children already stand at.
type groupFill struct {
	a         *Allocator
	kids      []kidFill
	byTrigger triggerHeap
	cur, next []float64
	nextShare float64
}

// kidFill is one child in a group's fill; f is nil while the child stands
// at its vector.
type kidFill struct {
	n *node
	f fill
	w float64
}

func (k *kidFill) vec() []float64 {
	if k.f == nil {
		return k.n.v
	}
	return k.f.vec()
}

// trigger is the group level below which the child steps back.
func (k *kidFill) trigger(a *Allocator) float64 {
	var p float64
	switch {
	case k.f != nil:
		p = k.f.prev()
	case k.n.isLeaf():
		p = leafPrev(k.n.s, k.n.step)
	default:
		p = a.plainBelow(k.n)
	}
	if p < 0 {
		return -1
	}
	return p / k.w
}

func (a *Allocator) fillOf(n *node) fill {
	if n.isLeaf() {
		return &leafFill{n: n, x: n.s}
	}
	return &walkCursor{a: a, n: n}
}

// newGroupFill starts n's fill at n's vector: children n counts whole at
// their vectors, children above n's level at their views there (exactly
// what combineRescaled summed).
func (a *Allocator) newGroupFill(n *node) *groupFill {
	g := &groupFill{a: a, cur: n.v}
	for _, d := range n.children {
		if d.s <= 0 {
			continue
		}
		k := kidFill{n: d, w: a.weightOf(d)}
		if d.key > n.level {
			y := float64(n.level * k.w)
			if d.isLeaf() {
				k.f = &leafFill{n: d, x: math.Min(d.s, wholeTasks(y, d.step))}
			} else {
				k.f = &walkCursor{a: a, n: d, i: a.walkTo(d, y)}
			}
		}
		g.kids = append(g.kids, k)
	}
	for i := range g.kids {
		if t := g.kids[i].trigger(a); t >= 0 {
			g.byTrigger = append(g.byTrigger, trig{t, i})
		}
	}
	heap.Init(&g.byTrigger)
	g.advance()
	return g
}

// advance computes the state before cur: every child triggered at the
// highest level steps back.
func (g *groupFill) advance() {
	if len(g.byTrigger) == 0 {
		g.next, g.nextShare = nil, -1
		return
	}
	g.next = append([]float64(nil), g.cur...)
	top := g.byTrigger[0].level
	var tied []int
	for len(g.byTrigger) > 0 && g.byTrigger[0].level >= top*(1-viewTie) {
		tied = append(tied, heap.Pop(&g.byTrigger).(trig).kid)
	}
	for _, i := range tied {
		k := &g.kids[i]
		for j, x := range k.vec() {
			g.next[j] -= x
		}
		if k.f == nil {
			k.f = g.a.fillOf(k.n)
		}
		k.f.drop()
		for j, x := range k.vec() {
			g.next[j] += x
		}
		if t := k.trigger(g.a); t >= 0 {
			heap.Push(&g.byTrigger, trig{t, i})
		}
	}
	for j, x := range g.next {
		g.next[j] = math.Max(0, x)
	}
	g.nextShare = g.a.share(g.next, false)
}

func (g *groupFill) prev() float64 { return g.nextShare }

func (g *groupFill) drop() {
	if g.next != nil {
		g.cur = g.next
		g.advance()
	}
}

// trig is a child's trigger level in a group's fill.
type trig struct {
	level float64
	kid   int
}

// triggerHeap orders triggers highest first.
type triggerHeap []trig

func (h triggerHeap) Len() int { return len(h) }
func (h triggerHeap) Less(i, j int) bool {
	if h[i].level != h[j].level {
		return h[i].level > h[j].level
	}
	return h[i].kid < h[j].kid
}
func (h triggerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *triggerHeap) Push(x any)   { *h = append(*h, x.(trig)) }
func (h *triggerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

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
