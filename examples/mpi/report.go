package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// What `mpi run` prints: the placement, why a gang did not fit, the
// ranks that failed, and the check of rank 0's results.

// explainGang says why the gang did not launch: what it wanted and what
// the offers had.
func (j *job) explainGang(err error) {
	if !errors.Is(err, framework.ErrGangTimeout) {
		fmt.Fprintf(j.out, "mpi: the gang did not launch: %v\n", err)
		return
	}
	fmt.Fprintf(j.out, "mpi: cannot place %d ranks within %s: wanted %s, each rank with %s and 1 port\n",
		j.cfg.ranks, j.cfg.deadline, j.cfg.describe(), resourcesText(j.tasks[0].Resources))
	offers := j.sched.offered()
	cs := constraintsText(j.cfg.constraints())
	if len(offers) == 0 {
		fmt.Fprintln(j.out, "mpi: no agent was offered: the master offers the gang only agents with room for a rank that pass "+cs)
	} else {
		fmt.Fprintf(j.out, "mpi: offers came from %d agent(s):\n", len(offers))
		passing := 0
		tw := tabwriter.NewWriter(j.out, 0, 0, 2, ' ', 0)
		for _, o := range offers {
			verdict := "room for a rank"
			if ok, why := placement.MatchOffer(o, j.cfg.constraints()); !ok {
				verdict = why
			} else if passing++; !j.fits(o) {
				verdict = "no room for a rank"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", o.Hostname, attributesText(o.Attributes, j.attributeNames()),
				resourcesText(o.Resources), verdict)
		}
		_ = tw.Flush()
		if passing == 0 {
			fmt.Fprintf(j.out, "mpi: no offered agent passes %s\n", cs)
		} else {
			fmt.Fprintf(j.out, "mpi: those offers hold at most %d of the %d ranks under %s\n",
				j.maxPlaceable(offers), j.cfg.ranks, cs)
		}
	}
	fmt.Fprintf(j.out, "mpi: the gang released every offer it held; nothing was launched (%v)\n", err)
}

// maxPlaceable is how many ranks the offers could hold together.
func (j *job) maxPlaceable(offers []protocol.Offer) int {
	for k := len(j.tasks); k > 0; k-- {
		spec := placement.Spec{Tasks: j.tasks[:k], Ports: 1, Constraints: j.cfg.constraints()}
		if _, ok := placement.Place(offers, spec); ok {
			return k
		}
	}
	return 0
}

// fits reports whether one rank fits in an offer, its port included.
func (j *job) fits(o protocol.Offer) bool {
	_, ok := placement.Place([]protocol.Offer{o}, placement.Spec{Tasks: j.tasks[:1], Ports: 1})
	return ok
}

// attributeNames are the attributes worth showing: those the
// constraints name, and the rack.
func (j *job) attributeNames() []string {
	names := []string{"rack"}
	for _, c := range j.cfg.constraints() {
		if !slices.Contains(names, c.Attribute) {
			names = append(names, c.Attribute)
		}
	}
	return names
}

// printPlacement shows where each rank runs.
func (j *job) printPlacement() {
	tasks := j.gang.Tasks()
	fmt.Fprintf(j.out, "mpi: gang placed and launched after %.2fs:\n", time.Since(j.start).Seconds())
	tw := tabwriter.NewWriter(j.out, 0, 0, 2, ' ', 0)
	for r, t := range tasks {
		o, _ := j.sched.agent(t.AgentID)
		where := net.JoinHostPort(agentHost(o), portsText(t.Resources))
		if r == 0 {
			where += " (root)"
		}
		fmt.Fprintf(tw, "  rank %d\t%s\t%s\t%s\tagent %s\n", r, o.Hostname,
			attributesText(o.Attributes, j.attributeNames()), where, t.AgentID)
	}
	_ = tw.Flush()
}

// printRanks shows each rank's last state, and the end of the stderr of
// those that failed.
func (j *job) printRanks(ctx context.Context) {
	tasks := j.gang.Tasks()
	for r, st := range j.sched.statuses() {
		line := fmt.Sprintf("  rank %d: ", r)
		if st.State == "" {
			line += "no status"
		} else {
			line += string(st.State)
		}
		if st.ExitCode != nil {
			line += fmt.Sprintf(", exit %d", *st.ExitCode)
		}
		if st.Reason != "" {
			line += " (" + st.Reason + ")"
		}
		if msg := strings.TrimSpace(st.Message); msg != "" {
			line += ": " + firstLine(msg)
		}
		fmt.Fprintln(j.out, line)
		if !st.State.Terminal() || st.State == protocol.TaskFinished || r >= len(tasks) {
			continue
		}
		stderr, err := j.sandboxFile(ctx, tasks[r], "stderr")
		if err != nil {
			fmt.Fprintf(j.out, "    (stderr unavailable: %v)\n", err)
			continue
		}
		for _, l := range lastLines(stderr, 5) {
			fmt.Fprintf(j.out, "    | %s\n", l)
		}
	}
}

// verify reads rank 0's result from its stdout and checks it against a
// local recomputation.
func (j *job) verify(ctx context.Context) int {
	tasks := j.gang.Tasks()
	o, _ := j.sched.agent(tasks[0].AgentID)
	stdout, err := j.sandboxFile(ctx, tasks[0], "stdout")
	if err != nil {
		fmt.Fprintf(j.out, "mpi: cannot read rank 0's output: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(j.out, "mpi: rank 0's stdout (on %s):\n", o.Hostname)
	var res result
	found := false
	for _, l := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		if js, ok := strings.CutPrefix(l, resultPrefix); ok {
			if err := json.Unmarshal([]byte(js), &res); err != nil {
				fmt.Fprintf(j.out, "mpi: rank 0's result line: %v\n", err)
				return exitFailed
			}
			found = true
			continue
		}
		fmt.Fprintf(j.out, "  | %s\n", l)
	}
	if !found {
		fmt.Fprintln(j.out, "mpi: rank 0's output holds no result")
		return exitFailed
	}
	bad := j.check(res)
	if len(bad) > 0 {
		fmt.Fprintf(j.out, "mpi: NOT verified: %s\n", strings.Join(bad, "; "))
		return exitFailed
	}
	fmt.Fprintf(j.out, "mpi: verified: allreduce and pi match the local recomputation, %d of %d ranks agree (%.2fs)\n",
		res.Agreed, j.cfg.ranks, time.Since(j.start).Seconds())
	return exitVerified
}

// check compares rank 0's result with the local recomputation, printing
// both, and returns the mismatches.
func (j *job) check(res result) []string {
	var bad []string
	mark := func(ok bool, what string) string {
		if ok {
			return "ok"
		}
		bad = append(bad, what)
		return "MISMATCH"
	}
	if res.Size != j.cfg.ranks || res.VectorLen != j.cfg.vectorLen || res.Intervals != j.cfg.intervals {
		bad = append(bad, fmt.Sprintf("rank 0 ran %d ranks, %d elements, %d intervals", res.Size, res.VectorLen, res.Intervals))
		return bad
	}
	e := expect(j.cfg.ranks, j.cfg.vectorLen, j.cfg.intervals)
	fmt.Fprintf(j.out, "mpi: allreduce of %d elements over %d ranks: checksum expected %.17g, got %.17g: %s\n",
		res.VectorLen, res.Size, e.Checksum, res.Checksum, mark(res.Checksum == e.Checksum, "checksum"))
	if !slices.Equal(res.Samples, e.Samples) {
		bad = append(bad, "elements")
	}
	for i, s := range e.Samples {
		got := "missing"
		if i < len(res.Samples) && res.Samples[i].Index == s.Index {
			got = fmt.Sprintf("%.17g", res.Samples[i].Value)
		}
		fmt.Fprintf(j.out, "mpi:   v[%d] expected %.17g, got %s\n", s.Index, s.Value, got)
	}
	diff, piErr := math.Abs(res.Pi-e.Pi), math.Abs(res.Pi-math.Pi)
	fmt.Fprintf(j.out, "mpi: pi = %.15f, error vs math.Pi %.3g (bound %.3g): %s\n",
		res.Pi, piErr, piBound(res.Intervals), mark(piErr <= piBound(res.Intervals), "pi error"))
	fmt.Fprintf(j.out, "mpi: pi recomputed locally %.15f, difference %.3g (tolerance %.0e): %s\n",
		e.Pi, diff, piTolerance, mark(diff <= piTolerance, "pi"))
	mark(res.Agreed == j.cfg.ranks, fmt.Sprintf("%d of %d ranks agree", res.Agreed, j.cfg.ranks))
	return bad
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// resourcesText shows resources for people: "cpus 0.2, mem 64 MiB".
func resourcesText(r protocol.Resources) string {
	var parts []string
	if v := r.Scalar(protocol.ResCPUs); v > 0 {
		parts = append(parts, fmt.Sprintf("cpus %g", float64(v)/1000))
	}
	if v := r.Scalar(protocol.ResMem); v > 0 {
		parts = append(parts, fmt.Sprintf("mem %d MiB", v))
	}
	if n := r.Ranges[protocol.ResPorts].Count(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d ports", n))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func portsText(r protocol.Resources) string {
	var out []string
	for _, p := range placement.PortList(r.Ranges[protocol.ResPorts]) {
		out = append(out, fmt.Sprint(p))
	}
	return strings.Join(out, ",")
}

// attributesText shows the named attributes an agent has.
func attributesText(attrs protocol.Attributes, names []string) string {
	var parts []string
	for _, n := range names {
		if v, ok := attrs[n]; ok {
			parts = append(parts, n+"="+v.String())
		}
	}
	return strings.Join(parts, " ")
}

func constraintsText(cs []protocol.Constraint) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.String())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// sortOffers orders offers by hostname, then agent.
func sortOffers(offers []protocol.Offer) {
	slices.SortFunc(offers, func(a, b protocol.Offer) int {
		if c := strings.Compare(a.Hostname, b.Hostname); c != 0 {
			return c
		}
		return strings.Compare(string(a.AgentID), string(b.AgentID))
	})
}
