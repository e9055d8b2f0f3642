package coflow

import "container/heap"

// FlowRate is one flow's sending rate in bytes per second.
type FlowRate struct {
	Flow FlowRef
	Rate float64
}

// Rates turns a decision into piecewise-constant flow rates on a fabric whose
// every port side has capacity bytes per second, skipping flows fin reports
// finished (fin may be nil). It returns only flows with a positive rate, in
// grant order. It is pure: the same arguments give the same rates.
//
// Priority decisions (MaxMin false) are served greedily in grant order: each
// flow gets min(its cap, free egress, free ingress). Then, if any grant has
// caps, a second pass in the same order gives capped flows whatever their
// ports still have free (Varys's work conservation after MADD). MaxMin
// decisions get per-flow max-min fair rates by progressive filling.
//
// Cost: O(granted flows) for priority decisions, O(flows·log ports) for
// MaxMin ones. Flows whose endpoints lie outside [0, d.Ports), and caps
// whose length differs from their grant's flows, are ignored rather than
// trusted: a hand-built decision cannot make Rates panic.
func Rates(d *Decision, capacity float64, fin FinishedFlows) []FlowRate {
	if d == nil || capacity <= 0 {
		return nil
	}
	if d.MaxMin {
		return maxMinRates(d, capacity, fin)
	}
	return priorityRates(d, capacity, fin)
}

func priorityRates(d *Decision, capacity float64, fin FinishedFlows) []FlowRate {
	eps := capacity * 1e-12
	freeE := make([]float64, d.Ports)
	freeI := make([]float64, d.Ports)
	for p := range freeE {
		freeE[p], freeI[p] = capacity, capacity
	}
	freeEgress, freeIngress := d.Ports, d.Ports
	var out []FlowRate
	capped := false
	// at[g][i] is the index in out of grant g's i-th flow, for the second
	// pass; only capped grants need it.
	at := make([][]int, len(d.Grants))
	for gi, g := range d.Grants {
		caps := grantCaps(g)
		if caps != nil {
			capped = true
			at[gi] = make([]int, len(g.Flows))
		}
		for i, f := range g.Flows {
			if at[gi] != nil {
				at[gi][i] = -1
			}
			if freeEgress == 0 || freeIngress == 0 {
				continue // the fabric is full; keep filling at[] for the second pass
			}
			l, ok := grantLink(d, g, f)
			if !ok || (fin != nil && fin.Finished(g.Coflow, f)) {
				continue
			}
			r := min(freeE[l.Src], freeI[l.Dst])
			if caps != nil {
				r = min(r, caps[i])
			}
			if r <= eps {
				continue
			}
			if at[gi] != nil {
				at[gi][i] = len(out)
			}
			out = append(out, FlowRate{Flow: FlowRef{Coflow: g.Coflow, Flow: f}, Rate: r})
			if freeE[l.Src] -= r; freeE[l.Src] <= eps {
				freeE[l.Src] = 0
				freeEgress--
			}
			if freeI[l.Dst] -= r; freeI[l.Dst] <= eps {
				freeI[l.Dst] = 0
				freeIngress--
			}
		}
	}
	if !capped {
		return out
	}
	for gi, g := range d.Grants {
		if grantCaps(g) == nil {
			continue
		}
		for i, f := range g.Flows {
			l, ok := grantLink(d, g, f)
			if !ok || (fin != nil && fin.Finished(g.Coflow, f)) {
				continue
			}
			r := min(freeE[l.Src], freeI[l.Dst])
			if r <= eps {
				continue
			}
			freeE[l.Src] -= r
			freeI[l.Dst] -= r
			if j := at[gi][i]; j >= 0 {
				out[j].Rate += r
			} else {
				out = append(out, FlowRate{Flow: FlowRef{Coflow: g.Coflow, Flow: f}, Rate: r})
			}
		}
	}
	return out
}

// maxMinRates is progressive filling: repeatedly take the port side whose
// fair share (free capacity / unfrozen flows) is smallest and freeze its
// flows at that share. Freezing a flow at the minimum share never lowers the
// share of its other side, so a heap with lazy re-insertion finds each
// bottleneck in order.
func maxMinRates(d *Decision, capacity float64, fin FinishedFlows) []FlowRate {
	type flow struct {
		ref      FlowRef
		src, dst int // side indices: egress p is p, ingress p is Ports+p
		rate     float64
		frozen   bool
	}
	var flows []flow
	sides := make([]mmSide, 2*d.Ports)
	for i := range sides {
		sides[i].rem = capacity
	}
	for _, g := range d.Grants {
		for _, f := range g.Flows {
			l, ok := grantLink(d, g, f)
			if !ok || (fin != nil && fin.Finished(g.Coflow, f)) {
				continue
			}
			fl := flow{ref: FlowRef{Coflow: g.Coflow, Flow: f}, src: int(l.Src), dst: d.Ports + int(l.Dst)}
			sides[fl.src].flows = append(sides[fl.src].flows, len(flows))
			sides[fl.dst].flows = append(sides[fl.dst].flows, len(flows))
			sides[fl.src].n++
			sides[fl.dst].n++
			flows = append(flows, fl)
		}
	}
	h := &mmHeap{}
	for i := range sides {
		if sides[i].n > 0 {
			heap.Push(h, mmEntry{side: i, share: sides[i].rem / float64(sides[i].n)})
		}
	}
	for h.Len() > 0 {
		e := heap.Pop(h).(mmEntry)
		s := &sides[e.side]
		if s.n == 0 {
			continue
		}
		if share := s.rem / float64(s.n); share != e.share {
			heap.Push(h, mmEntry{side: e.side, share: share})
			continue
		}
		for _, fi := range s.flows {
			fl := &flows[fi]
			if fl.frozen {
				continue
			}
			fl.frozen, fl.rate = true, e.share
			other := fl.dst
			if other == e.side {
				other = fl.src
			}
			o := &sides[other]
			o.rem -= e.share
			o.n--
			if o.n > 0 {
				heap.Push(h, mmEntry{side: other, share: o.rem / float64(o.n)})
			}
		}
		s.n, s.rem = 0, 0
	}
	out := make([]FlowRate, 0, len(flows))
	for _, fl := range flows {
		if fl.rate > 0 {
			out = append(out, FlowRate{Flow: fl.ref, Rate: fl.rate})
		}
	}
	return out
}

// grantCaps returns g's caps, or nil when it has none or they do not match
// its flows.
func grantCaps(g Grant) []float64 {
	if len(g.Caps) != len(g.Flows) {
		return nil
	}
	return g.Caps
}

// grantLink returns the endpoints of flow f of g if they are on the fabric.
func grantLink(d *Decision, g Grant, f int) (Link, bool) {
	if f < 0 || f >= len(g.Links) {
		return Link{}, false
	}
	l := g.Links[f]
	ok := l.Src >= 0 && int(l.Src) < d.Ports && l.Dst >= 0 && int(l.Dst) < d.Ports
	return l, ok
}

type mmSide struct {
	rem   float64
	n     int
	flows []int
}

type mmEntry struct {
	side  int
	share float64
}

// mmHeap orders port sides by share, then by side index (determinism).
type mmHeap struct{ es []mmEntry }

func (h *mmHeap) Len() int { return len(h.es) }
func (h *mmHeap) Less(i, j int) bool {
	if h.es[i].share != h.es[j].share {
		return h.es[i].share < h.es[j].share
	}
	return h.es[i].side < h.es[j].side
}
func (h *mmHeap) Swap(i, j int) { h.es[i], h.es[j] = h.es[j], h.es[i] }
func (h *mmHeap) Push(x any)    { h.es = append(h.es, x.(mmEntry)) }
func (h *mmHeap) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	return e
}
