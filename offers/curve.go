package offers

import (
	"math"
	"slices"
	"sort"
)

// A growth curve records how a subtree's vector grew with its dominant
// share under water-filling: the vector the subtree held when its share was
// x, for x from 0 to its current share. Scale-down rescaling replaces a
// child that rose above its lowest non-blocked sibling's level by the child's
// vector *at* that level. For a leaf, whose tasks all have one mix, that is
// its vector scaled by a scalar. A group's mix changes as some members block
// while others keep growing, so scaling its summed vector by one scalar
// under- or over-charges it; its curve, built by water-filling its own
// children's curves, gives the vector it actually held at that level.
//
// A curve is a list of points (x, v) with x non-decreasing from 0; v is
// linear in x between consecutive points (kinks of the dominant resource are
// points too). Where x stays flat while v grows (members growing in a
// resource that is not the group's dominant one), the later point wins:
// water-filling hands out such share-free growth before the level moves on.
type curve struct {
	x []float64
	v [][]float64
}

// addAt adds to out the vector child c held when its share was y (y < c.s).
func (a *Allocator) addAt(c *node, y float64, out []float64) {
	if c.isLeaf() || c.s <= 0 {
		f := 0.0
		if c.s > 0 {
			f = y / c.s
		}
		for j, x := range c.v {
			out[j] += float64(f * x)
		}
		return
	}
	cv := a.curveOf(c)
	k := sort.Search(len(cv.x), func(i int) bool { return cv.x[i] > y })
	if k >= len(cv.x) {
		for j, x := range cv.v[len(cv.v)-1] {
			out[j] += x
		}
		return
	}
	if k == 0 {
		return
	}
	x0, x1 := cv.x[k-1], cv.x[k]
	f := (y - x0) / (x1 - x0)
	for j := range out {
		v0, v1 := cv.v[k-1][j], cv.v[k][j]
		out[j] += v0 + float64(f*(v1-v0))
	}
}

// curveOf returns n's growth curve, building it when n changed since.
func (a *Allocator) curveOf(n *node) *curve {
	if n.curveVer == n.evalSeq && n.curve != nil {
		return n.curve
	}
	n.curve = a.buildCurve(n)
	n.curveVer = n.evalSeq
	return n.curve
}

// segEvent changes the growth rate (or jumps the vector) at level tau.
type segEvent struct {
	tau   float64
	slope []float64 // added to dv/dtau from tau on
	jump  []float64 // added to v at tau (a flat-share segment)
	order int       // stable tie order
}

// buildCurve water-fills n's children: at level tau every child c stands at
// share min(tau*w_c, s_c) on its own curve, up to n's level t (its lowest
// non-blocked child's key; unbounded when n is blocked). Each child's
// segment contributes a constant rate while it is being climbed, so one
// sweep over the sorted segment ends builds n's curve.
func (a *Allocator) buildCurve(n *node) *curve {
	m := len(n.v)
	var events []segEvent
	// add climbs one segment of child c's curve, from share x0 to x1, but
	// stops at level limit (in tau).
	add := func(c *node, limit, x0, x1 float64, v0, v1 []float64) {
		w := a.weightOf(c)
		t0 := x0 / w
		if t0 > limit || (t0 == limit && x1 > x0) {
			return
		}
		dv := make([]float64, m)
		for j := range dv {
			dv[j] = vecAt(v1, j) - vecAt(v0, j)
		}
		if x1 <= x0 {
			events = append(events, segEvent{tau: t0, jump: dv, order: len(events)})
			return
		}
		rate := make([]float64, m)
		neg := make([]float64, m)
		for j := range rate {
			rate[j] = float64(w*dv[j]) / (x1 - x0)
			neg[j] = -rate[j]
		}
		events = append(events, segEvent{tau: t0, slope: rate, order: len(events)})
		events = append(events, segEvent{tau: math.Min(x1/w, limit), slope: neg, order: len(events)})
	}
	for _, c := range n.children {
		if c.s <= 0 {
			continue
		}
		// Children the node counts whole climb to their end; the others
		// stop at the node's level.
		limit := n.level
		if c.key <= n.level {
			limit = math.Inf(1)
		}
		if c.isLeaf() {
			add(c, limit, 0, c.s, nil, c.v)
			continue
		}
		cv := a.curveOf(c)
		for k := 1; k < len(cv.x); k++ {
			add(c, limit, cv.x[k-1], cv.x[k], cv.v[k-1], cv.v[k])
		}
	}
	slices.SortStableFunc(events, func(p, q segEvent) int {
		switch {
		case p.tau < q.tau:
			return -1
		case p.tau > q.tau:
			return 1
		}
		return p.order - q.order
	})
	cur := make([]float64, m)
	rate := make([]float64, m)
	taus := []float64{0}
	pts := [][]float64{slices.Clone(cur)}
	last := 0.0
	emit := func(tau float64) {
		taus = append(taus, tau)
		pts = append(pts, slices.Clone(cur))
	}
	for i := 0; i < len(events); {
		tau := events[i].tau
		if tau > last {
			for j := range cur {
				cur[j] += float64(rate[j] * (tau - last))
			}
			last = tau
			emit(tau)
		}
		for ; i < len(events) && events[i].tau == tau; i++ {
			e := events[i]
			if e.jump != nil {
				for j := range cur {
					cur[j] += e.jump[j]
				}
				emit(tau)
			}
			for j := range e.slope {
				rate[j] += e.slope[j]
			}
		}
	}
	// The last point is exactly n's vector, free of accumulated round-off.
	copy(pts[len(pts)-1], n.v)
	return a.shareCurve(pts)
}

// shareCurve turns points along a piecewise-linear path into a curve in
// share: it adds the kinks where the dominant resource changes, so v stays
// linear in x between points, and drops points that lie on a straight
// segment (a subtree whose members share one mix keeps two points).
func (a *Allocator) shareCurve(pts [][]float64) *curve {
	out := &curve{}
	push := func(v []float64) {
		out.x = append(out.x, a.share(v, false))
		out.v = append(out.v, v)
	}
	push(pts[0])
	for k := 1; k < len(pts); k++ {
		p, q := pts[k-1], pts[k]
		for _, lam := range a.kinks(p, q) {
			v := make([]float64, len(p))
			for j := range v {
				v[j] = p[j] + float64(lam*(q[j]-p[j]))
			}
			push(v)
		}
		push(q)
	}
	return compress(out)
}

// kinks returns the interior parameters in (0,1) where the resource that
// dominates the share changes along the segment from p to q.
func (a *Allocator) kinks(p, q []float64) []float64 {
	type line struct{ b, s float64 } // normalized value at 0 and its slope
	var lines []line
	for j := range p {
		r := a.capacity.at(j)
		if r <= 0 {
			continue
		}
		lines = append(lines, line{p[j] / float64(r), (q[j] - p[j]) / float64(r)})
	}
	if len(lines) < 2 {
		return nil
	}
	cur := 0
	for i, l := range lines {
		c := lines[cur]
		if l.b > c.b || (l.b == c.b && l.s > c.s) {
			cur = i
		}
	}
	var out []float64
	lam := 0.0
	for {
		c := lines[cur]
		next, best := -1, 1.0
		for i, l := range lines {
			if l.s <= c.s {
				continue
			}
			if at := (c.b - l.b) / (l.s - c.s); at > lam+1e-12 && at < best-1e-12 {
				next, best = i, at
			}
		}
		if next < 0 {
			return out
		}
		out = append(out, best)
		lam, cur = best, next
	}
}

// compress drops interior points that lie on the straight segment between
// their neighbours.
func compress(c *curve) *curve {
	if len(c.x) <= 2 {
		return c
	}
	out := &curve{x: c.x[:1], v: c.v[:1]}
	for k := 1; k < len(c.x)-1; k++ {
		p := len(out.x) - 1
		if !collinear(out.x[p], out.v[p], c.x[k], c.v[k], c.x[k+1], c.v[k+1]) {
			out.x = append(out.x, c.x[k])
			out.v = append(out.v, c.v[k])
		}
	}
	out.x = append(out.x, c.x[len(c.x)-1])
	out.v = append(out.v, c.v[len(c.v)-1])
	return out
}

func collinear(x0 float64, v0 []float64, x1 float64, v1 []float64, x2 float64, v2 []float64) bool {
	if x2 <= x0 {
		return false
	}
	f := (x1 - x0) / (x2 - x0)
	for j := range v1 {
		want := v0[j] + f*(v2[j]-v0[j])
		if math.Abs(v1[j]-want) > 1e-9*math.Max(1, math.Abs(want)) {
			return false
		}
	}
	return true
}

func vecAt(v []float64, j int) float64 {
	if j < len(v) {
		return v[j]
	}
	return 0
}
