package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// Tables of the operator commands.

func table(w io.Writer, header string, rows func(tw io.Writer)) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	rows(tw)
	_ = tw.Flush()
}

func printStatus(w io.Writer, st api.State) {
	leader := st.LeaderID
	if st.LeaderHTTP != "" {
		leader += " (http://" + st.LeaderHTTP + ")"
	}
	fmt.Fprintf(w, "leader      %s, raft index %d\n", orNone(leader), st.RaftIndex)
	fmt.Fprintf(w, "agents      %d: %s\n", len(st.Agents), countBy(st.Agents, func(a api.Agent) string { return a.State }))
	fmt.Fprintf(w, "frameworks  %d: %s\n", len(st.Frameworks), countBy(st.Frameworks, func(f api.Framework) string {
		if f.Connected {
			return "connected"
		}
		return "disconnected"
	}))
	fmt.Fprintf(w, "tasks       %d: %s\n", len(st.Tasks), countBy(st.Tasks, func(t api.Task) string { return string(t.State) }))
	fmt.Fprintf(w, "offers      %d outstanding: %s\n", len(st.Offers), countBy(st.Offers, func(o api.Offer) string { return o.Kind }))
	var total protocol.Resources
	for _, a := range st.Agents {
		if a.State == "active" || a.State == "draining" {
			total = total.Add(a.Resources)
		}
	}
	var used protocol.Resources
	for _, t := range st.Tasks {
		used = used.Add(t.Resources)
	}
	fmt.Fprintf(w, "capacity    %s\n", orNone(api.FormatResources(total)))
	fmt.Fprintf(w, "in tasks    %s\n", orNone(api.FormatResources(used)))
}

// countBy renders "3 active, 1 draining", keys sorted.
func countBy[T any](xs []T, key func(T) string) string {
	n := map[string]int{}
	for _, x := range xs {
		n[key(x)]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
	}
	return orNone(strings.Join(parts, ", "))
}

func printAgents(w io.Writer, st api.State) {
	tasks := map[protocol.AgentID]int{}
	for _, t := range st.Tasks {
		tasks[t.AgentID]++
	}
	table(w, "ID\tHOSTNAME\tSTATE\tTASKS\tRESOURCES\tATTRIBUTES", func(tw io.Writer) {
		for _, a := range st.Agents {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", a.ID, a.Hostname, agentState(a), tasks[a.ID], api.FormatResources(a.Resources), attributes(a.Attributes))
		}
	})
}

// agentState is an agent's state, with a drain's deadline or end.
func agentState(a api.Agent) string {
	switch {
	case a.Drained:
		return a.State + " (drained)"
	case a.DrainDeadline != nil:
		return a.State + " (tasks killed at " + *a.DrainDeadline + ")"
	}
	return a.State
}

func attributes(m map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func printFrameworks(w io.Writer, st api.State) {
	tasks := map[protocol.FrameworkID]int{}
	for _, t := range st.Tasks {
		tasks[t.FrameworkID]++
	}
	table(w, "ID\tNAME\tROLE\tPRINCIPAL\tCONNECTED\tSUPPRESSED\tTASKS", func(tw io.Writer) {
		for _, f := range st.Frameworks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%t\t%d\n", f.ID, f.Name, orNone(f.Role), orNone(f.Principal), f.Connected, f.Suppressed, tasks[f.ID])
		}
	})
}

func printTasks(w io.Writer, st api.State) {
	table(w, "FRAMEWORK\tTASK\tAGENT\tSTATE\tHEALTH\tKIND\tRESOURCES\tREASON", func(tw io.Writer) {
		for _, t := range st.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.FrameworkID, t.TaskID, t.AgentID, t.State, health(t.Healthy),
				orNone(string(t.Kind)), api.FormatResources(t.Resources), t.Reason)
		}
	})
}

func printOffers(w io.Writer, st api.State) {
	table(w, "ID\tFRAMEWORK\tAGENT\tKIND\tRESOURCES\tEXPIRES", func(tw io.Writer) {
		for _, o := range st.Offers {
			exp := "never"
			if o.Expires != nil {
				exp = *o.Expires
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.ID, o.FrameworkID, o.AgentID, o.Kind, api.FormatResources(o.Resources), exp)
		}
	})
}

func printCoflows(w io.Writer, cs api.Coflows) {
	table(w, "FRAMEWORK\tCOFLOW\tPHASE\tQUEUE\tFLOWS LEFT\tSENT\tESTIMATE", func(tw io.Writer) {
		for _, c := range cs.Coflows {
			queue, estimate := "-", "-"
			if c.Queue >= 0 {
				queue = fmt.Sprint(c.Queue)
			}
			if c.EstimatedBytes > 0 {
				estimate = fmt.Sprintf("%.0f B", c.EstimatedBytes)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d B\t%s\n", c.FrameworkID, c.CoflowID, c.Phase, queue,
				c.FlowsLeft, c.Flows, c.BytesSent, estimate)
		}
	})
	fmt.Fprintf(w, "%d coflow(s) completed since the leader was elected\n", cs.Completed)
}

func printRoles(w io.Writer, st api.State) {
	quota := func(r *protocol.Resources) string {
		if r == nil {
			return "none"
		}
		return orNone(api.FormatResources(*r))
	}
	table(w, "ROLE\tWEIGHT\tDOMINANT SHARE\tALLOCATION\tGUARANTEE\tLIMIT\tOFFER CONSTRAINTS", func(tw io.Writer) {
		for _, r := range st.Roles {
			fmt.Fprintf(tw, "%s\t%g\t%.3f\t%s\t%s\t%s\t%s\n", r.Path, r.Weight, r.DominantShare,
				orNone(api.FormatResources(r.Allocation)), quota(r.Guarantee), quota(r.Limit), constraintList(r.OfferConstraints))
		}
	})
}

func printExplanation(w io.Writer, ex api.Explanation) {
	fmt.Fprintf(w, "framework %s in role %q: connected %t, suppressed %t\n", ex.FrameworkID, ex.Role, ex.Connected, ex.Suppressed)
	fmt.Fprintf(w, "holds %s (dominant share %.3f), of which %d outstanding offers hold %s\n",
		orNone(api.FormatResources(ex.Allocation)), ex.DominantShare, ex.Offers, orNone(api.FormatResources(ex.Offered)))
	if !ex.Declared {
		fmt.Fprintln(w, "declared no demand: it is offered whole remainders of agents")
	}
	for _, f := range ex.Filters {
		until := "forever"
		if f.Until != nil {
			until = "until " + *f.Until
		}
		fmt.Fprintf(w, "declined agent %s %s\n", f.AgentID, until)
	}
	if len(ex.Shapes) > 0 {
		fmt.Fprintf(w, "\ntask shapes, and how many of the %d agents could take one task now (or what keeps it off them):\n", ex.Agents)
		table(w, "KIND\tRESOURCES\tPENDING\tOFFERED\tFIT\tTOO SMALL\tCONSTRAINTS\tROLE\tFILTERED\tDRAINING\tQUOTA", func(tw io.Writer) {
			for _, s := range ex.Shapes {
				pending := "unbounded"
				if s.Pending != nil {
					pending = strconv.FormatInt(*s.Pending, 10)
				}
				res := api.FormatResources(s.Resources)
				if s.Ports > 0 {
					res += fmt.Sprintf(", %d ports", s.Ports)
				}
				for _, c := range s.Constraints {
					res += ", " + c.String()
				}
				quota := "ok"
				switch {
				case len(s.LimitedBy) > 0:
					quota = "at limit of " + strings.Join(s.LimitedBy, ", ")
				case s.HeldBack:
					quota = "held back for guarantees"
				}
				a := s.Agents
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Kind, res, pending, s.Offered,
					a.Fit, a.Resources, a.Constraints, a.Role, a.Filtered, a.Draining, quota)
			}
		})
	}
	fmt.Fprintln(w)
	if len(ex.Reasons) == 0 {
		fmt.Fprintln(w, "nothing keeps offers from it: it gets them in its turn, in H-DRF order")
		return
	}
	fmt.Fprintln(w, "what keeps offers from it:")
	for _, r := range ex.Reasons {
		fmt.Fprintln(w, "  -", r)
	}
}

// describeEvent renders a cluster event as one line.
func describeEvent(ev protocol.ClusterEvent) string {
	at := time.Unix(0, ev.Time).UTC().Format(time.RFC3339Nano)
	switch {
	case ev.Task != nil:
		s := ev.Task
		line := fmt.Sprintf("%s task %s/%s on %s: %s", at, s.FrameworkID, s.TaskID, orNone(string(s.AgentID)), s.State)
		if s.Reason != "" {
			line += " (" + s.Reason + ")"
		}
		return line
	case ev.Agent != nil:
		return fmt.Sprintf("%s agent %s %s: %s", at, ev.Agent.AgentID, ev.Agent.Hostname, ev.Agent.State)
	case ev.Framework != nil:
		return fmt.Sprintf("%s framework %s %q in role %q: %s", at, ev.Framework.FrameworkID, ev.Framework.Name, ev.Framework.Role, ev.Framework.State)
	case ev.Operator != nil:
		op := ev.Operator
		line := fmt.Sprintf("%s operator %s", at, op.Action)
		for _, part := range []string{string(op.FrameworkID), string(op.TaskID), string(op.AgentID)} {
			if part != "" {
				line += " " + part
			}
		}
		if op.Detail != "" {
			line += " (" + op.Detail + ")"
		}
		return line
	case ev.Preemption != nil:
		p := ev.Preemption
		line := fmt.Sprintf("%s task %s/%s on %s %s (%s)", at, p.FrameworkID, p.TaskID, p.AgentID, p.State, p.Reason)
		if p.Deadline != 0 {
			line += ", deadline " + time.Unix(0, p.Deadline).UTC().Format(time.RFC3339)
		}
		return line
	}
	return fmt.Sprintf("%s %s", at, ev.Type)
}

// health renders a health-check result: "healthy", "unhealthy" or "-".
func health(h *bool) string {
	switch {
	case h == nil:
		return "-"
	case *h:
		return "healthy"
	}
	return "unhealthy"
}

// constraintList renders constraints as "pool == "gpu"; zone in [z1 z2]",
// or "none".
func constraintList(cs []protocol.Constraint) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, c.String())
	}
	return orNone(strings.Join(parts, "; "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
