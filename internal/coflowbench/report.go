package coflowbench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/allot-project/allot/sim/coflowsim"
)

// leaderSlot is the leader's coflow slot (master/coflowbook): the
// simulator predicts with the same δ.
const leaderSlot = 100 * time.Millisecond

// SimPolicy is the simulator's policy for a testbed policy: uncoordinated
// transfers share every port, as max-min fair sharing does.
func SimPolicy(policy string) string {
	if policy == Uncoordinated {
		return "fair"
	}
	return policy
}

// Row is one policy's figures, on the testbed and in the simulator.
type Row struct {
	Policy                   string
	AvgMs, P50Ms, P90Ms      float64
	SimAvgMs, SimP50, SimP90 float64
	// Speedup is the first policy's over this one: the ratio of average
	// CCTs, and the P50 and P90 of the per-coflow ratios; SimSpeedup the
	// same in the simulator.
	Speedup, SimSpeedup [3]float64
	ElapsedS            float64
}

// Report puts the runs beside the simulator's predictions for the same
// trace on the testbed's fabric: senders' ports of egress bytes a second,
// receivers' of ingress (0: unlimited, the only other value the
// simulator models being the egress), δ the leader's, and decisions served
// by order only, as the agents serve them.
func Report(tr *coflowsim.Trace, egress, ingress int64, runs []PolicyRun) ([]Row, error) {
	switch ingress {
	case 0:
		tr = coflowsim.EgressOnly(tr)
	case egress:
	default:
		return nil, fmt.Errorf("%w: the simulator models receivers that take in as much as senders send, or without limit; not %d against %d bytes a second",
			ErrConfig, ingress, egress)
	}
	var rows []Row
	var sims []coflowsim.Result
	for _, r := range runs {
		cfg := coflowsim.DefaultConfig()
		cfg.Policy = SimPolicy(r.Policy)
		cfg.Coflow.Capacity = float64(egress)
		cfg.Coflow.Slot = leaderSlot
		cfg.OrderOnly = true
		sim, err := coflowsim.Run(tr, cfg)
		if err != nil {
			return nil, fmt.Errorf("simulate %s: %w", r.Policy, err)
		}
		sims = append(sims, sim)
		ccts := sorted(r.Coflows)
		rows = append(rows, Row{Policy: r.Policy, AvgMs: mean(ccts), P50Ms: pct(ccts, 50), P90Ms: pct(ccts, 90),
			SimAvgMs: sim.AvgCCTms, SimP50: sim.P50CCTms, SimP90: sim.P90CCTms, ElapsedS: r.Elapsed.Seconds()})
	}
	for i := range rows {
		rows[i].Speedup = speedup(byID(runs[0].Coflows), byID(runs[i].Coflows))
		rows[i].SimSpeedup = speedup(simByID(sims[0]), simByID(sims[i]))
	}
	return rows, nil
}

// speedup is base's speedup over other: the ratio of their average CCTs,
// and the P50 and P90 of other's CCT over base's, coflow by coflow.
func speedup(base, other map[string]float64) [3]float64 {
	var sb, so float64
	var ratios []float64
	for id, b := range base {
		o, ok := other[id]
		if !ok {
			continue
		}
		sb, so = sb+b, so+o
		ratios = append(ratios, o/math.Max(b, 1e-9))
	}
	slices.Sort(ratios)
	return [3]float64{so / math.Max(sb, 1e-9), pct(ratios, 50), pct(ratios, 90)}
}

func byID(res []coflowResult) map[string]float64 {
	m := make(map[string]float64, len(res))
	for _, r := range res {
		m[r.ID] = float64(r.CCT) / float64(time.Millisecond)
	}
	return m
}

func simByID(r coflowsim.Result) map[string]float64 {
	m := make(map[string]float64, len(r.Coflows))
	for id, o := range r.Coflows {
		m[id] = o.CCTms
	}
	return m
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// pct is the p-th percentile of sorted xs (nearest rank).
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// WriteTable prints the rows.
func WriteTable(w io.Writer, rows []Row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "%-14s %9s %8s %8s | %9s %8s %8s | %7s | %s's speedup: testbed (sim) avg, p50, p90 | run\n",
		"policy", "avg ms", "p50 ms", "p90 ms", "sim avg", "sim p50", "sim p90", "tb/sim", rows[0].Policy)
	for _, r := range rows {
		fmt.Fprintf(w, "%-14s %9.0f %8.0f %8.0f | %9.0f %8.0f %8.0f | %7.2f | %5.2f (%5.2f) %5.2f (%5.2f) %5.2f (%5.2f) | %.0f s\n",
			r.Policy, r.AvgMs, r.P50Ms, r.P90Ms, r.SimAvgMs, r.SimP50, r.SimP90, r.AvgMs/math.Max(r.SimAvgMs, 1e-9),
			r.Speedup[0], r.SimSpeedup[0], r.Speedup[1], r.SimSpeedup[1], r.Speedup[2], r.SimSpeedup[2], r.ElapsedS)
	}
}

// sorted returns the CCTs in milliseconds, ascending.
func sorted(res []coflowResult) []float64 {
	out := make([]float64, len(res))
	for i, r := range res {
		out[i] = float64(r.CCT) / float64(time.Millisecond)
	}
	slices.Sort(out)
	return out
}
