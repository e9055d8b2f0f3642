package carbyne

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/allot-project/allot/sim/internal/table"
)

// maxJobLines is the most jobs WriteRun lists one by one.
const maxJobLines = 30

// WriteRun prints one run as a table: each job (for small
// workloads), then the metrics and the first round's leftover pool.
func WriteRun(w io.Writer, r Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "workload %s, scheduler %s, seed %d\n", r.Workload, r.Scheduler, r.Seed)
	if len(r.Order) <= maxJobLines {
		tw := table.New(&b)
		fmt.Fprintln(tw, "job\tarrival\tjct\tplanned T_k\t")
		for _, name := range r.Order {
			j := r.Jobs[name]
			planned := "-"
			if j.PlannedJCT > 0 {
				planned = table.Num(j.PlannedJCT)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, table.Num(j.Arrival), table.Num(j.JCT), planned)
		}
		tw.Flush()
	} else {
		fmt.Fprintf(&b, "%d jobs (--json lists each)\n", len(r.Order))
	}
	fmt.Fprintf(&b, "average JCT %s s, p95 JCT %s s, makespan %s s, Jain's index %.3f (dominant shares), %.3f (shortfall)\n",
		table.Num(r.AvgJCT), table.Num(r.P95JCT), table.Num(r.Makespan), r.Jain, r.JainShortfall)
	fmt.Fprintf(&b, "leftover pool in the first round: %s\n", leftoverSteps(r.Leftover))
	fmt.Fprintf(&b, "work run on leftover offers: %.1f%%\n", 100*r.LeftoverWork)
	if r.Planned > 0 {
		fmt.Fprintf(&b, "jobs finishing after their first plan's T_k: %d of %d (worst by %.1f%% of T_k)\n",
			r.Late, r.Planned, 100*r.MaxLate)
	}
	fmt.Fprintf(&b, "rounds %d, plans %d\n", r.Rounds, r.Plans)
	_, err := io.WriteString(w, b.String())
	return err
}

// maxLeftoverSteps is the most steps of the leftover pool a table shows.
const maxLeftoverSteps = 8

// leftoverSteps renders the leftover pool's steps, eliding the middle of a
// long sequence.
func leftoverSteps(xs []float64) string {
	steps := make([]string, 0, maxLeftoverSteps+1)
	for i, x := range xs {
		if len(xs) > maxLeftoverSteps && i >= maxLeftoverSteps-2 && i < len(xs)-1 {
			if i == maxLeftoverSteps-2 {
				steps = append(steps, fmt.Sprintf("(%d more)", len(xs)-maxLeftoverSteps+1))
			}
			continue
		}
		steps = append(steps, table.Num(x))
	}
	return strings.Join(steps, " -> ")
}

// WriteComparison prints comparisons (one per sweep value) as one
// table, factors against each comparison's first scheduler; with deciles,
// each scheduler's per-job factor deciles follow.
func WriteComparison(w io.Writer, cs []Comparison, deciles bool) error {
	if len(cs) == 0 || len(cs[0].Rows) == 0 {
		return nil
	}
	var b strings.Builder
	seeds := make([]string, len(cs[0].Seeds))
	for i, s := range cs[0].Seeds {
		seeds[i] = strconv.FormatUint(s, 10)
	}
	first := cs[0].Rows[0].Scheduler
	fmt.Fprintf(&b, "workload %s, seeds %s (medians over seeds)\n", cs[0].Workload, strings.Join(seeds, ","))
	fmt.Fprintf(&b, "factors: %s's time over each scheduler's (above 1 is faster); per job: fractions of jobs by factor\n", first)
	tw := table.New(&b)
	knob := cs[0].Sweep
	head := "scheduler\tavg jct\tp95 jct\tmakespan\tjain\tshortfall\tavg x\tp95 x\tmakespan x\tjain diff\t>=1\t<1\t<0.8\tmin\ton leftover\t"
	if knob != "" {
		head = knob + "\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, c := range cs {
		for _, r := range c.Rows {
			if knob != "" {
				fmt.Fprintf(tw, "%s\t", table.Num(c.Value))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t%+.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.3f\t\n",
				r.Scheduler, short(r.AvgJCT), short(r.P95JCT), short(r.Makespan), r.Jain, r.JainShortfall, r.AvgFactor, r.P95Factor, r.MakespanFactor,
				r.JainDelta, r.PerJob.AtLeast1, r.PerJob.Below1, r.PerJob.Below08, r.PerJob.Min, r.LeftoverWork)
		}
	}
	tw.Flush()
	if deciles {
		fmt.Fprintf(&b, "per-job factor against %s, deciles 10%% .. 90%%:\n", first)
		for _, c := range cs {
			for _, r := range c.Rows[1:] {
				ds := make([]string, len(r.PerJob.Deciles))
				for i, x := range r.PerJob.Deciles {
					ds[i] = fmt.Sprintf("%.2f", x)
				}
				label := r.Scheduler
				if knob != "" {
					label = knob + "=" + table.Num(c.Value) + " " + label
				}
				fmt.Fprintf(&b, "  %s: %s\n", label, strings.Join(ds, " "))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// short formats a time in seconds to one decimal, or two below 10.
func short(x float64) string {
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}
