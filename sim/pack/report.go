package pack

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteFill prints a fill report as a table, one row per policy.
func WriteFill(w io.Writer, r *FillReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fill: pods %s (%d), nodes %s (%d, %s GPUs), seeds %s; means over seeds\n",
		r.Pods, r.TracePods, r.Nodes, r.NodeCount, strconv.FormatFloat(r.GPUs, 'f', -1, 64), seedRange(r.Seeds))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tGPU alloc at 100% arrived\t1 point lost at (arrived)\talloc at 130%\tfailed pods\tarrivals\t")
	for _, p := range r.Policies {
		fmt.Fprintf(tw, "%s\t%.2f%%\t%.1f%%\t%.2f%%\t%.1f\t%.1f\t\n", p.Policy, 100*p.AllocAt100, 100*p.FirstLossAt,
			100*p.Curve[len(p.Curve)-1].Allocated, p.Failed, p.Arrivals)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteReplay prints a replay report as a table, one row per policy.
func WriteReplay(w io.Writer, r *ReplayReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "replay: pods %s (%d), nodes %s (%d, %s GPUs), speed-up %s, seeds %s; means over seeds, waits in trace seconds\n",
		r.Pods, r.TracePods, r.Nodes, r.NodeCount, strconv.FormatFloat(r.GPUs, 'f', -1, 64),
		strconv.FormatFloat(r.Speedup, 'f', -1, 64), seedRange(r.Seeds))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tpods that waited\tmean wait\tmax wait\tnever placed\t")
	for _, p := range r.Policies {
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.0f\t%.1f\t\n", p.Policy, p.Waited, p.MeanWait, p.MaxWait, p.NeverPlaced)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// seedRange renders seeds compactly: "1-10" for a run of consecutive seeds.
func seedRange(seeds []uint64) string {
	consecutive := true
	for i := 1; i < len(seeds); i++ {
		consecutive = consecutive && seeds[i] == seeds[i-1]+1
	}
	if consecutive && len(seeds) > 2 {
		return fmt.Sprintf("%d-%d", seeds[0], seeds[len(seeds)-1])
	}
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ",")
}
