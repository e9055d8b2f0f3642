package coflow

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
// ports still have free (Varys's work conservation after MADD). FairShare
// decisions get per-flow max-min fair rates (see maxMinRates), or with
// EqualSplit the equal split of every port side (see SplitRate).
//
// Cost: O(granted flows), O(flows·log ports) for max-min. Flows whose endpoints lie outside [0, d.Ports), and caps
// whose length differs from their grant's flows, are ignored rather than
// trusted: a hand-built decision cannot make Rates panic.
func Rates(d *Decision, capacity float64, fin FinishedFlows) []FlowRate {
	if d == nil || capacity <= 0 {
		return nil
	}
	switch {
	case d.FairShare && d.EqualSplit:
		return splitRates(d, capacity, fin)
	case d.FairShare:
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

// splitRates is per-flow fair sharing with no coordination (the reference
// simulator's FAIR): every port side splits its capacity equally among the
// granted unfinished flows crossing it, and each flow sends at the smaller
// of its two shares. What a flow cannot use at its faster side is not handed
// to the others there: no coordinator redistributes it.
func splitRates(d *Decision, capacity float64, fin FinishedFlows) []FlowRate {
	nE := make([]int, d.Ports)
	nI := make([]int, d.Ports)
	each := func(visit func(g *Grant, f int, l Link)) {
		for gi := range d.Grants {
			g := &d.Grants[gi]
			for _, f := range g.Flows {
				l, ok := grantLink(d, *g, f)
				if ok && (fin == nil || !fin.Finished(g.Coflow, f)) {
					visit(g, f, l)
				}
			}
		}
	}
	n := 0
	each(func(_ *Grant, _ int, l Link) { nE[l.Src]++; nI[l.Dst]++; n++ })
	out := make([]FlowRate, 0, n)
	each(func(g *Grant, f int, l Link) {
		out = append(out, FlowRate{Flow: FlowRef{Coflow: g.Coflow, Flow: f}, Rate: SplitRate(capacity, nE[l.Src], nI[l.Dst])})
	})
	return out
}

// SplitRate is a flow's rate under the equal split (fair-split) on sides of
// the given capacity: the smaller of its egress's and its ingress's equal
// shares, with nE and nI flows crossing them.
func SplitRate(capacity float64, nE, nI int) float64 {
	return capacity / float64(max(nE, nI))
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
