package phoenix

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/allot-project/allot/sim/internal/table"
)

// Plain-text tables of Phoenix runs, comparisons and experiments.

func formatPercentiles(p Percentiles) string {
	return fmt.Sprintf("%.0f / %.0f / %.0f", p.P50, p.P90, p.P99)
}

func formatFactors(f Factors) string {
	return fmt.Sprintf("%.2f / %.2f / %.2f", f.P50, f.P90, f.P99)
}

// WriteRun prints one run's percentiles.
func WriteRun(w io.Writer, r Result) error {
	c := r.Config
	fmt.Fprintf(w, "%s on the %s trace: %d workers, %d jobs, load %.2f, seed %d\n", c.Scheduler, c.Trace, c.Workers, c.Jobs, c.Load, c.Seed)
	tw := table.New(w)
	fmt.Fprintln(tw, "jobs\tn\tp50 / p90 / p99 response (s)\t")
	for _, row := range []struct {
		name string
		p    Percentiles
	}{{"short", r.Short}, {"long", r.Long}, {"constrained", r.Constrained}, {"unconstrained", r.Unconstrained},
		{"short constrained", r.ShortConstrained}, {"short unconstrained", r.ShortUnconstrained}, {"short queuing", r.Queuing}} {
		fmt.Fprintf(tw, "%s\t%d\t%s\t\n", row.name, row.p.N, formatPercentiles(row.p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "hard-constraint violations %d, guard breaches %d, rejected %d, relaxed %d, Jain %.3f, makespan %.0f s\n",
		r.Violations, r.GuardBreaches, r.Rejected, r.Relaxed, r.Jain, r.Makespan)
	return err
}

// WriteComparison prints medians and factors against the first
// scheduler (its time over each one's: above 1 is faster).
func WriteComparison(w io.Writer, c Comparison) error {
	fmt.Fprintf(w, "%s trace: %d workers, %d jobs, load %.2f, seeds %v (medians)\n", c.Trace, c.Workers, c.Jobs, c.Load, c.Seeds)
	tw := table.New(w)
	fmt.Fprintln(tw, "scheduler\tshort p50/p90/p99\tlong\tconstrained\tunconstrained\tshort queuing\tviolations\t")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Scheduler, formatPercentiles(r.Short), formatPercentiles(r.Long), formatPercentiles(r.Constrained),
			formatPercentiles(r.Unconstrained), formatPercentiles(r.Queuing), r.Violations)
	}
	fmt.Fprintf(tw, "factor vs %s\t\t\t\t\t\t\t\n", c.Rows[0].Scheduler)
	for _, r := range c.Rows[1:] {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\t\n", r.Scheduler, formatFactors(r.ShortFactor), formatFactors(r.LongFactor),
			formatFactors(r.ConstrainedFactor), formatFactors(r.UnconstrainedFactor), formatFactors(r.QueuingFactor))
	}
	return tw.Flush()
}

// WriteExperiment prints an experiment's comparisons and checks.
func WriteExperiment(w io.Writer, ex Experiment) error {
	fmt.Fprintf(w, "%s: %s\n\n", ex.ID, ex.Title)
	for _, c := range ex.Comparisons {
		if err := WriteComparison(w, c); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tmeasured\tpaper\tcriterion\tpass\t")
	for _, k := range ex.Checks {
		fmt.Fprintf(tw, "%s\t%.3g\t%s\t%s\t%v\t\n", k.Name, k.Value, k.Paper, k.Criterion, k.Pass)
	}
	return tw.Flush()
}
