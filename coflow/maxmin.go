package coflow

import "github.com/allot-project/allot/internal/heapq"

// maxMinRates gives every granted unfinished flow its per-flow max-min fair
// rate over the port sides (the fair scheduler), by progressive filling:
// repeatedly take the port side whose fair share (free capacity / unfrozen
// flows crossing it) is smallest and freeze its unfrozen flows at that
// share, taking it from their other sides. What a flow cannot use at its
// faster side thus goes to the other flows there. Freezing flows at the
// smallest share never lowers another side's share, so a heap with lazy
// re-insertion finds the sides in order. Cost: O(flows·log ports).
//
// This is the reference the simulator's fast path is checked against: it
// walks flows one by one, with nothing kept between calls.
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
	h := heapq.New(lowerShare)
	for i := range sides {
		if sides[i].n > 0 {
			h.Push(mmEntry{side: i, share: sides[i].rem / float64(sides[i].n)})
		}
	}
	for h.Len() > 0 {
		e := h.Pop()
		s := &sides[e.side]
		if s.n == 0 {
			continue
		}
		if share := s.rem / float64(s.n); share != e.share {
			h.Push(mmEntry{side: e.side, share: share})
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
			o.rem = max(0, o.rem-e.share)
			o.n--
			if o.n > 0 {
				h.Push(mmEntry{side: other, share: o.rem / float64(o.n)})
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

type mmSide struct {
	rem   float64
	n     int
	flows []int
}

type mmEntry struct {
	side  int
	share float64
}

// lowerShare orders port sides by share, then by side index
// (determinism).
func lowerShare(a, b mmEntry) bool {
	if a.share != b.share {
		return a.share < b.share
	}
	return a.side < b.side
}
