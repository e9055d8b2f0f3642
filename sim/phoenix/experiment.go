package phoenix

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The acceptance experiments A0-A4 of docs/phoenix.md, each a set of
// comparisons and the checks that page states.

// Experiment is one experiment's comparisons and checks.
type Experiment struct {
	ID          string       `json:"id"`
	Title       string       `json:"title"`
	Comparisons []Comparison `json:"comparisons"`
	Checks      []Check      `json:"checks"`
}

// Check is one measured quantity beside the paper's and the pass
// criterion.
type Check struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Paper     string  `json:"paper"`
	Criterion string  `json:"criterion"`
	Pass      bool    `json:"pass"`
}

// Experiments lists the experiment ids.
func Experiments() []string { return []string{"a0", "a1", "a2", "a3", "a4"} }

// a0Loads are A0's load levels, as multiples of each trace's default.
var a0Loads = []float64{0.9, 1, 1.05}

// RunExperiment runs experiment id with base's workers, jobs and
// (for every trace) its load, on seeds.
func RunExperiment(r *Runner, id string, base Config, seeds []uint64) (Experiment, error) {
	x := &experimentRun{r: r, base: base, seeds: seeds, ex: Experiment{ID: id}}
	run, ok := experimentRuns[id]
	if !ok {
		return x.ex, fmt.Errorf("%w: experiment %q (want one of %s)", ErrBadSimulation, id, strings.Join(Experiments(), ", "))
	}
	if err := run(x); err != nil {
		return x.ex, err
	}
	for _, c := range x.ex.Comparisons {
		for _, row := range c.Rows {
			x.check(fmt.Sprintf("%s %s (load %.2f): hard-constraint violations", c.Trace, row.Scheduler, c.Load),
				float64(row.Violations), "", "0", row.Violations == 0)
		}
	}
	return x.ex, nil
}

// experimentRuns are the experiments by id.
var experimentRuns = map[string]func(*experimentRun) error{
	"a0": (*experimentRun).a0, "a1": (*experimentRun).a1, "a2": (*experimentRun).a2,
	"a3": (*experimentRun).a3, "a4": (*experimentRun).a4,
}

// experimentRun gathers one experiment's comparisons and checks.
type experimentRun struct {
	r     *Runner
	base  Config
	seeds []uint64
	ex    Experiment
}

// compare runs schedulers on trace at load and keeps the comparison.
func (x *experimentRun) compare(trace string, load float64, schedulers ...string) (Comparison, error) {
	c := x.base
	c.Trace, c.Load = trace, load
	cmp, err := Compare(x.r, c, schedulers, x.seeds)
	if err == nil {
		x.ex.Comparisons = append(x.ex.Comparisons, cmp)
	}
	return cmp, err
}

// loadOf is the load trace runs at: the base's, or else the trace's
// default.
func (x *experimentRun) loadOf(trace string) float64 {
	if x.base.Load > 0 {
		return x.base.Load
	}
	return traceShapes[trace].load
}

func (x *experimentRun) check(name string, v float64, paper, crit string, pass bool) {
	x.ex.Checks = append(x.ex.Checks, Check{Name: name, Value: v, Paper: paper, Criterion: crit, Pass: pass})
}

// a0 calibrates the cluster and traces: constraints alone must slow
// Eagle-C's short jobs about as the paper reports, more at higher load.
func (x *experimentRun) a0() error {
	x.ex.Title = "Calibration: Eagle (constraints ignored) vs Eagle-C, p99 short-job response time"
	for _, t := range Traces() {
		var ratios []float64
		for _, m := range a0Loads {
			c, err := x.compare(t, math.Min(x.loadOf(t)*m, 2), SchedEagle, SchedEagleC)
			if err != nil {
				return err
			}
			ratios = append(ratios, 1/c.Rows[1].ShortFactor.P99)
		}
		ref := ratios[1]
		x.check(t+": Eagle-C / Eagle p99 short", ref, "1.7 (average)", "1.4 to 2.0", ref >= 1.4 && ref <= 2.0)
		x.check(t+": ratio monotone over loads "+formatFloats(ratios), 0, "grows with load", "non-decreasing",
			slices.IsSorted(ratios))
	}
	return nil
}

func (x *experimentRun) a1() error {
	x.ex.Title = "Phoenix vs Eagle-C, p99 short-job response time"
	sum := 0.0
	for _, t := range Traces() {
		c, err := x.compare(t, x.loadOf(t), SchedEagleC, SchedPhoenix)
		if err != nil {
			return err
		}
		f := c.Rows[1].ShortFactor.P99
		sum += f
		x.check(t+": Eagle-C / Phoenix p99 short", f, "", "≥ 0.95", f >= 0.95)
	}
	avg := sum / 3
	x.check("average over the traces", avg, "1.9", "≥ 1.5", avg >= 1.5)
	return nil
}

func (x *experimentRun) a2() error {
	x.ex.Title = "Phoenix vs Hawk-C, p90 and p99 short-job response time"
	var s90, s99 float64
	for _, t := range Traces() {
		c, err := x.compare(t, x.loadOf(t), SchedHawkC, SchedPhoenix)
		if err != nil {
			return err
		}
		f := c.Rows[1].ShortFactor
		s90 += f.P90
		s99 += f.P99
		x.check(t+": Hawk-C / Phoenix p90 short", f.P90, "", "", true)
		x.check(t+": Hawk-C / Phoenix p99 short", f.P99, "", "", true)
	}
	x.check("average p90", s90/3, "4.5", "≥ 3", s90/3 >= 3)
	x.check("average p99", s99/3, "5", "≥ 3", s99/3 >= 3)
	return nil
}

func (x *experimentRun) a3() error {
	x.ex.Title = "Short-job queuing time: unconstrained baseline (eagle), Hawk-C, Eagle-C, Yaq-d, Phoenix"
	for _, t := range []string{"yahoo", "cloudera"} {
		c, err := x.compare(t, x.loadOf(t), SchedEagle, SchedHawkC, SchedEagleC, SchedYaqD, SchedPhoenix)
		if err != nil {
			return err
		}
		rows := c.Rows
		q := func(i int) Percentiles { return rows[i].Queuing }
		for _, i := range []int{2, 3} {
			r90 := checkRatio(q(i).P90, q(0).P90)
			x.check(fmt.Sprintf("%s: %s / baseline queuing p90", t, rows[i].Scheduler), r90, "2-2.5", "1.5 to 3", r90 >= 1.5 && r90 <= 3)
		}
		hawkWorst := q(1).P90 >= slices.Max([]float64{q(2).P90, q(3).P90, q(4).P90}) &&
			q(1).P99 >= slices.Max([]float64{q(2).P99, q(3).P99, q(4).P99})
		x.check(t+": Hawk-C worst at p90 and p99", 0, "worst everywhere", "Hawk-C highest", hawkWorst)
		between := q(4).P90 <= q(2).P90 && q(4).P90 >= q(0).P90*0.95
		x.check(t+": Phoenix between baseline and Eagle-C at p90", checkRatio(q(4).P90, q(0).P90), "closer to baseline",
			"baseline ≤ Phoenix ≤ Eagle-C", between)
	}
	return nil
}

func (x *experimentRun) a4() error {
	x.ex.Title = "Side effects of Phoenix against Eagle-C"
	for _, t := range Traces() {
		c, err := x.compare(t, x.loadOf(t), SchedEagleC, SchedPhoenix)
		if err != nil {
			return err
		}
		e, p := c.Rows[0], c.Rows[1]
		l50 := checkRatio(p.Long.P50, e.Long.P50)
		l99 := checkRatio(p.Long.P99, e.Long.P99)
		u50 := checkRatio(p.Unconstrained.P50, e.Unconstrained.P50)
		su99 := checkRatio(p.ShortUnconstrained.P99, e.ShortUnconstrained.P99)
		x.check(t+": long p50, Phoenix / Eagle-C", l50, "not affected", "within 5%", math.Abs(l50-1) <= 0.05)
		x.check(t+": long p99, Phoenix / Eagle-C", l99, "not affected", "within 10%", math.Abs(l99-1) <= 0.10)
		x.check(t+": unconstrained p50, Phoenix / Eagle-C", u50, "not affected", "within 5%", math.Abs(u50-1) <= 0.05)
		x.check(t+": unconstrained short p99, Phoenix / Eagle-C", su99, "not affected", "≤ 1.10", su99 <= 1.10)
		x.check(t+": Jain index, Phoenix - Eagle-C", p.Jain-e.Jain, "not affected", "≥ -0.02", p.Jain-e.Jain >= -0.02)
	}
	return nil
}

func checkRatio(a, b float64) float64 {
	if b <= 0 {
		if a <= 0 {
			return 1
		}
		return 1e9 // JSON has no infinity
	}
	return a / b
}

func formatFloats(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.2f", x))
	}
	return "(" + strings.Join(s, ", ") + ")"
}
