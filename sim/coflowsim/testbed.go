package coflowsim

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/allot-project/allot/coflow"
)

// Fold maps a trace onto a fabric of a few ports, for a testbed whose
// agents replay it: port p becomes p mod ports, a coflow's flows between
// the same two ports merge into one, every flow's size is multiplied by
// byteScale (at least one byte) and every arrival by timeScale. The
// result uses the per-flow format, so that `allot sim coflow` on it
// predicts what the testbed measures.
func Fold(tr *Trace, ports int, byteScale, timeScale float64) (*Trace, error) {
	if ports < 1 || !(byteScale > 0) || !(timeScale > 0) || math.IsInf(byteScale, 0) || math.IsInf(timeScale, 0) {
		return nil, fmt.Errorf("%w: fold onto %d ports, bytes ×%g, time ×%g: want at least one port and positive scales",
			ErrBadSimulation, ports, byteScale, timeScale)
	}
	out := &Trace{Ports: ports, Coflows: make([]TraceCoflow, 0, len(tr.Coflows))}
	for _, c := range tr.Coflows {
		merged := map[[2]int]float64{}
		for _, f := range c.Flows {
			merged[[2]int{f.Src % ports, f.Dst % ports}] += float64(f.Bytes)
		}
		d := TraceCoflow{ID: c.ID, ArrivalMs: int64(math.Round(float64(c.ArrivalMs) * timeScale)), PerFlow: true}
		var senders, receivers []int
		for link, bytes := range merged {
			d.Flows = append(d.Flows, TraceFlow{Src: link[0], Dst: link[1], Bytes: max(1, int64(math.Round(bytes*byteScale)))})
			senders, receivers = append(senders, link[0]), append(receivers, link[1])
		}
		slices.SortFunc(d.Flows, func(a, b TraceFlow) int { return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst)) })
		slices.Sort(senders)
		slices.Sort(receivers)
		d.Mappers, d.Reducers = slices.Compact(senders), slices.Compact(receivers)
		out.Coflows = append(out.Coflows, d)
	}
	// Rounding may tie arrivals that were apart; the order stays.
	return out, nil
}

// EgressOnly gives every flow a receiving port of its own (after the
// trace's ports), so that only the senders' ports share their capacity:
// the fabric of a testbed whose receivers take in as fast as the senders
// send. A receiving port carries one flow, which its sender caps at the
// same capacity, so it never binds.
func EgressOnly(tr *Trace) *Trace {
	out := &Trace{Ports: tr.Ports, Coflows: make([]TraceCoflow, len(tr.Coflows))}
	for i, c := range tr.Coflows {
		d := c
		d.PerFlow, d.ReducerMB = true, nil
		d.Flows = make([]TraceFlow, len(c.Flows))
		d.Reducers = make([]int, len(c.Flows))
		for j, f := range c.Flows {
			d.Flows[j] = TraceFlow{Src: f.Src, Dst: out.Ports, Bytes: f.Bytes}
			d.Reducers[j] = out.Ports
			out.Ports++
		}
		out.Coflows[i] = d
	}
	return out
}

// withoutCaps returns d with its grants' rate caps dropped (OrderOnly).
func withoutCaps(d *coflow.Decision) *coflow.Decision {
	if d == nil {
		return nil
	}
	out := *d
	out.Grants = make([]coflow.Grant, len(d.Grants))
	for i, g := range d.Grants {
		g.Caps = nil
		out.Grants[i] = g
	}
	return &out
}
