package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The acceptance experiments A0-A4 of docs/phoenix.md, each a set of
// comparisons and the checks that page states.

// PhoenixExperiment is one experiment's comparisons and checks.
type PhoenixExperiment struct {
	ID          string              `json:"id"`
	Title       string              `json:"title"`
	Comparisons []PhoenixComparison `json:"comparisons"`
	Checks      []PhoenixCheck      `json:"checks"`
}

// PhoenixCheck is one measured quantity beside the paper's and the pass
// criterion.
type PhoenixCheck struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Paper     string  `json:"paper"`
	Criterion string  `json:"criterion"`
	Pass      bool    `json:"pass"`
}

// PhoenixExperiments lists the experiment ids.
func PhoenixExperiments() []string { return []string{"a0", "a1", "a2", "a3", "a4"} }

// pxA0Loads are A0's load levels, as multiples of each trace's default.
var pxA0Loads = []float64{0.9, 1, 1.05}

// RunPhoenixExperiment runs experiment id with base's workers, jobs and
// (for every trace) its load, on seeds.
func RunPhoenixExperiment(r *PhoenixRunner, id string, base PhoenixConfig, seeds []uint64) (PhoenixExperiment, error) {
	cmp := func(trace string, load float64, schedulers ...string) (PhoenixComparison, error) {
		c := base
		c.Trace, c.Load = trace, load
		return ComparePhoenix(r, c, schedulers, seeds)
	}
	loadOf := func(trace string) float64 {
		if base.Load > 0 {
			return base.Load
		}
		return pxTraces[trace].load
	}
	ex := PhoenixExperiment{ID: id}
	add := func(c PhoenixComparison, err error) error {
		if err == nil {
			ex.Comparisons = append(ex.Comparisons, c)
		}
		return err
	}
	check := func(name string, v float64, paper, crit string, pass bool) {
		ex.Checks = append(ex.Checks, PhoenixCheck{Name: name, Value: v, Paper: paper, Criterion: crit, Pass: pass})
	}
	switch id {
	case "a0":
		ex.Title = "Calibration: Eagle (constraints ignored) vs Eagle-C, p99 short-job response time"
		for _, t := range PhoenixTraces() {
			var ratios []float64
			for _, m := range pxA0Loads {
				if err := add(cmp(t, math.Min(loadOf(t)*m, 2), PhoenixEagle, PhoenixEagleC)); err != nil {
					return ex, err
				}
				ratios = append(ratios, 1/ex.Comparisons[len(ex.Comparisons)-1].Rows[1].ShortFactor.P99)
			}
			ref := ratios[1]
			check(t+": Eagle-C / Eagle p99 short", ref, "1.7 (average)", "1.4 to 2.0", ref >= 1.4 && ref <= 2.0)
			check(t+": ratio monotone over loads "+pxFloats(ratios), 0, "grows with load", "non-decreasing",
				slices.IsSorted(ratios))
		}
	case "a1":
		ex.Title = "Phoenix vs Eagle-C, p99 short-job response time"
		sum, worst := 0.0, math.Inf(1)
		for _, t := range PhoenixTraces() {
			if err := add(cmp(t, loadOf(t), PhoenixEagleC, PhoenixPhoenix)); err != nil {
				return ex, err
			}
			f := ex.Comparisons[len(ex.Comparisons)-1].Rows[1].ShortFactor.P99
			sum += f
			worst = min(worst, f)
			check(t+": Eagle-C / Phoenix p99 short", f, "", "≥ 0.95", f >= 0.95)
		}
		avg := sum / 3
		check("average over the traces", avg, "1.9", "≥ 1.5", avg >= 1.5)
	case "a2":
		ex.Title = "Phoenix vs Hawk-C, p90 and p99 short-job response time"
		var s90, s99 float64
		for _, t := range PhoenixTraces() {
			if err := add(cmp(t, loadOf(t), PhoenixHawkC, PhoenixPhoenix)); err != nil {
				return ex, err
			}
			f := ex.Comparisons[len(ex.Comparisons)-1].Rows[1].ShortFactor
			s90 += f.P90
			s99 += f.P99
			check(t+": Hawk-C / Phoenix p90 short", f.P90, "", "", true)
			check(t+": Hawk-C / Phoenix p99 short", f.P99, "", "", true)
		}
		check("average p90", s90/3, "4.5", "≥ 3", s90/3 >= 3)
		check("average p99", s99/3, "5", "≥ 3", s99/3 >= 3)
	case "a3":
		ex.Title = "Short-job queuing time: unconstrained baseline (eagle), Hawk-C, Eagle-C, Yaq-d, Phoenix"
		for _, t := range []string{"yahoo", "cloudera"} {
			if err := add(cmp(t, loadOf(t), PhoenixEagle, PhoenixHawkC, PhoenixEagleC, PhoenixYaqD, PhoenixPhoenix)); err != nil {
				return ex, err
			}
			rows := ex.Comparisons[len(ex.Comparisons)-1].Rows
			q := func(i int) PhoenixPercentiles { return rows[i].Queuing }
			for _, i := range []int{2, 3} {
				r90 := pxRatio(q(i).P90, q(0).P90)
				check(fmt.Sprintf("%s: %s / baseline queuing p90", t, rows[i].Scheduler), r90, "2-2.5", "1.5 to 3", r90 >= 1.5 && r90 <= 3)
			}
			hawkWorst := q(1).P90 >= slices.Max([]float64{q(2).P90, q(3).P90, q(4).P90}) &&
				q(1).P99 >= slices.Max([]float64{q(2).P99, q(3).P99, q(4).P99})
			check(t+": Hawk-C worst at p90 and p99", 0, "worst everywhere", "Hawk-C highest", hawkWorst)
			between := q(4).P90 <= q(2).P90 && q(4).P90 >= q(0).P90*0.95
			check(t+": Phoenix between baseline and Eagle-C at p90", pxRatio(q(4).P90, q(0).P90), "closer to baseline",
				"baseline ≤ Phoenix ≤ Eagle-C", between)
		}
	case "a4":
		ex.Title = "Side effects of Phoenix against Eagle-C"
		for _, t := range PhoenixTraces() {
			if err := add(cmp(t, loadOf(t), PhoenixEagleC, PhoenixPhoenix)); err != nil {
				return ex, err
			}
			rows := ex.Comparisons[len(ex.Comparisons)-1].Rows
			e, p := rows[0], rows[1]
			l50 := pxRatio(p.Long.P50, e.Long.P50)
			l99 := pxRatio(p.Long.P99, e.Long.P99)
			u50 := pxRatio(p.Unconstrained.P50, e.Unconstrained.P50)
			su99 := pxRatio(p.ShortUnconstrained.P99, e.ShortUnconstrained.P99)
			check(t+": long p50, Phoenix / Eagle-C", l50, "not affected", "within 5%", math.Abs(l50-1) <= 0.05)
			check(t+": long p99, Phoenix / Eagle-C", l99, "not affected", "within 10%", math.Abs(l99-1) <= 0.10)
			check(t+": unconstrained p50, Phoenix / Eagle-C", u50, "not affected", "within 5%", math.Abs(u50-1) <= 0.05)
			check(t+": unconstrained short p99, Phoenix / Eagle-C", su99, "not affected", "≤ 1.10", su99 <= 1.10)
			check(t+": Jain index, Phoenix - Eagle-C", p.Jain-e.Jain, "not affected", "≥ -0.02", p.Jain-e.Jain >= -0.02)
		}
	default:
		return ex, fmt.Errorf("%w: experiment %q (want one of %s)", ErrBadPhoenix, id, strings.Join(PhoenixExperiments(), ", "))
	}
	for _, c := range ex.Comparisons {
		for _, row := range c.Rows {
			check(fmt.Sprintf("%s %s (load %.2f): hard-constraint violations", c.Trace, row.Scheduler, c.Load),
				float64(row.Violations), "", "0", row.Violations == 0)
		}
	}
	return ex, nil
}

func pxRatio(a, b float64) float64 {
	if b <= 0 {
		if a <= 0 {
			return 1
		}
		return 1e9 // JSON has no infinity
	}
	return a / b
}

func pxFloats(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.2f", x))
	}
	return "(" + strings.Join(s, ", ") + ")"
}
