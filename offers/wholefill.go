package offers

import (
	"math"

	"github.com/allot-project/allot/internal/heapq"
)

// Whole-task fills stepped backwards: the states a subtree passed through
// as static H-DRF filled it one whole task at a time, read from the newest
// back (view.go says what the states are and why views use them).

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

// walkCursor is a child group's fill, read from a run of the group's own
// walk.
type walkCursor struct {
	n *node
	r *walkRun
	i int
}

func (c *walkCursor) vec() []float64 { return c.r.state(c.n, c.i) }
func (c *walkCursor) prev() float64  { return c.r.before(c.i) }

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
	byTrigger *heapq.Heap[trig]
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
	return &walkCursor{n: n, r: a.walkOf(n).runs[0]}
}

// newGroupFill starts n's fill at its state when n's level was tau: each
// child at the state it stood at then (children above n's level stop at
// n's level). At tau = +Inf that is n's vector, exactly what
// combineRescaled summed.
func (a *Allocator) newGroupFill(n *node, tau float64) *groupFill {
	g := &groupFill{a: a}
	if math.IsInf(tau, 1) {
		g.cur = n.v
	} else {
		g.cur = make([]float64, len(n.v))
	}
	for _, d := range n.children {
		if d.s <= 0 {
			continue
		}
		k := kidFill{n: d, w: a.weightOf(d)}
		if sh := a.shareAtLevel(n, d, tau); sh < d.s {
			if d.isLeaf() {
				k.f = &leafFill{n: d, x: d.leafViewShare(sh)}
			} else {
				r, i := a.walkTo(d, sh)
				k.f = &walkCursor{n: d, r: r, i: i}
			}
		}
		if !math.IsInf(tau, 1) {
			for j, x := range k.vec() {
				g.cur[j] += x
			}
		}
		g.kids = append(g.kids, k)
	}
	g.byTrigger = heapq.New(higherTrigger)
	for i := range g.kids {
		if t := g.kids[i].trigger(a); t >= 0 {
			g.byTrigger.Push(trig{t, i})
		}
	}
	g.advance()
	return g
}

// advance computes the state before cur: every child triggered at the
// highest level steps back.
func (g *groupFill) advance() {
	first, ok := g.byTrigger.Peek()
	if !ok {
		g.next, g.nextShare = nil, -1
		return
	}
	g.next = append([]float64(nil), g.cur...)
	top := first.level
	var tied []int
	for e, ok := first, true; ok && e.level >= top*(1-viewTie); e, ok = g.byTrigger.Peek() {
		tied = append(tied, g.byTrigger.Pop().kid)
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
			g.byTrigger.Push(trig{t, i})
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

// higherTrigger orders triggers highest first, ties by child.
func higherTrigger(a, b trig) bool {
	if a.level != b.level {
		return a.level > b.level
	}
	return a.kid < b.kid
}
