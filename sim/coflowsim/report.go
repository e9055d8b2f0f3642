package coflowsim

import (
	"fmt"
	"io"
	"strings"

	"github.com/allot-project/allot/sim/internal/stats"
	"github.com/allot-project/allot/sim/internal/table"
)

// maxCoflowLines is the most coflows WriteRun lists one by one.
const maxCoflowLines = 30

// WriteRun prints one run: each coflow's CCT (for small traces), the
// CCT statistics and the coordinator's load.
func WriteRun(w io.Writer, r Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "policy %s, %d coflows\n", r.Policy, len(r.Order))
	if len(r.Order) <= maxCoflowLines {
		tw := table.New(&b)
		fmt.Fprintln(tw, "coflow\tarrival ms\tflows\tMB\tcct ms\t")
		for _, id := range r.Order {
			c := r.Coflows[id]
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t\n", id, c.ArrivalMs, c.Flows, table.Num(float64(c.Bytes)/MB), table.Num(c.CCTms))
		}
		tw.Flush()
	} else {
		fmt.Fprintf(&b, "(--json lists every coflow)\n")
	}
	fmt.Fprintf(&b, "CCT ms: average %s, p50 %s, p90 %s, p99 %s; makespan %s ms\n",
		table.Num(r.AvgCCTms), table.Num(r.P50CCTms), table.Num(r.P90CCTms), table.Num(r.P99CCTms), table.Num(r.MakespanMs))
	if e := r.Estimation; e != nil {
		fmt.Fprintf(&b, "size estimates of %d piloted coflows: relative error mean %.3f, std %.3f\n",
			e.Coflows, e.MeanError, e.StdError)
	}
	writeLoad(&b, r.Load)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeLoad(b *strings.Builder, l Load) {
	fmt.Fprintf(b, "per %s ms interval (%d busy): %.1f agents sent updates, %.1f%% of intervals pushed a new schedule "+
		"(%.1f%% recomputed); %d decisions, %d pushes, %d rate computations\n",
		table.Num(l.IntervalMs), l.BusyIntervals, l.AgentsPerInterval, 100*l.PushFraction,
		100*stats.Ratio(float64(l.RecomputeIntervals), float64(l.BusyIntervals)), l.Recomputes, l.Pushes, l.RateRuns)
}

// WriteComparison prints comparisons (one per sweep value) as one
// table with factors against each comparison's first policy, then each
// policy's coordinator load.
func WriteComparison(w io.Writer, cs []Comparison) error {
	if len(cs) == 0 || len(cs[0].Rows) == 0 {
		return nil
	}
	var b strings.Builder
	sh := cs[0].Trace
	first := cs[0].Rows[0].Policy
	fmt.Fprintf(&b, "trace: %d ports, %d coflows, %d flows, %s MB\n", sh.Ports, sh.Coflows, sh.Flows,
		table.Num(float64(sh.Bytes)/MB))
	if cs[0].Invert {
		fmt.Fprintf(&b, "factors: each policy's speedup over %s (%s's CCT over the policy's); p50/p90 x are per coflow\n", first, first)
	} else {
		fmt.Fprintf(&b, "factors: %s's speedup over each policy (the policy's CCT over %s's); p50/p90 x are per coflow\n", first, first)
	}
	knob := cs[0].Sweep
	tw := table.New(&b)
	head := "policy\tavg cct ms\tp50 ms\tp90 ms\tp99 ms\tavg x\tp50 x\tp90 x\test err\t"
	if knob != "" {
		head = knob + "\tcoflows\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, c := range cs {
		for _, r := range c.Rows {
			if knob != "" {
				fmt.Fprintf(tw, "%s\t%d\t", table.Num(c.Value), c.Trace.Coflows)
			}
			est := "-"
			if r.Estimation != nil {
				est = fmt.Sprintf("%.3f", r.Estimation.MeanError)
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%s\t\n", r.Policy, r.AvgCCTms, r.P50CCTms,
				r.P90CCTms, r.P99CCTms, r.AvgFactor, r.P50Factor, r.P90Factor, est)
		}
	}
	tw.Flush()
	if knob == "" {
		fmt.Fprintf(&b, "coordinator load:\n")
		for _, r := range cs[0].Rows {
			fmt.Fprintf(&b, "  %s: ", r.Policy)
			writeLoad(&b, r.Load)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
