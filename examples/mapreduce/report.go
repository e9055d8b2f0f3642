package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/protocol"
)

// jobReport is how one job went.
type jobReport struct {
	job       *runJob
	role      string
	demand    protocol.Resources
	res       dag.Result
	ended     bool // the job ran to its end (successfully or not)
	mapAgents int
	shuffle   shuffleStats
	verdict   string
	err       error
}

// String renders the report as a few lines: the job, its completion
// time, its tasks on fair and leftover offers, its shuffle and its check.
func (r jobReport) String() string {
	var b strings.Builder
	s := r.job.spec
	input := "generated, " + formatSize(s.Size)
	if r.job.src.dir != "" {
		input = r.job.src.dir + ", " + formatSize(s.Size)
	}
	fmt.Fprintf(&b, "job %s [%s] %s (%s), %s, %s: ", s.ID, r.role, s.Kind, input, plural(s.Maps, "map"),
		plural(s.Reducers, "reducer"))
	finished := r.ended && r.res.Err == nil
	if finished {
		fmt.Fprintf(&b, "JCT %s\n", r.res.JCT.Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "FAILED: %v\n", r.err)
	}
	fmt.Fprintf(&b, "  tasks: %d on fair offers, %d on leftover offers (leftover used: %s), %d failed attempts\n",
		r.res.FairTasks, r.res.LeftoverTasks, times(r.demand, r.res.LeftoverTasks), r.res.Failures)
	if !finished {
		return b.String()
	}
	fmt.Fprintf(&b, "  shuffle: %d partition files, %d from other agents (%s of %s); maps ran on %s\n",
		r.shuffle.Partitions, r.shuffle.Remote, formatSize(r.shuffle.RemoteBytes), formatSize(r.shuffle.Bytes),
		plural(r.mapAgents, "agent"))
	if r.err != nil {
		fmt.Fprintf(&b, "  MISMATCH: %v\n", r.err)
	} else {
		fmt.Fprintf(&b, "  %s\n", r.verdict)
	}
	return b.String()
}

// roleSummary renders a role's framework counters: its offers and tasks
// of each kind, and what it declined as leftover.
func roleSummary(role string, st dag.Stats, demand protocol.Resources) string {
	declined := st.DeclinedLeftover.String()
	if declined == "" {
		declined = "nothing"
	}
	return fmt.Sprintf("role %s: %d fair and %d leftover offers; %d tasks on fair offers, %d on leftover offers (leftover used: %s); declined as leftover: %s\n",
		role, st.FairOffers, st.LeftoverOffers, st.FairTasks, st.LeftoverTasks, times(demand, st.LeftoverTasks), declined)
}

// plural renders n things: "1 agent", "3 agents".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// times is n tasks' worth of demand.
func times(demand protocol.Resources, n int) string {
	if n == 0 {
		return "nothing"
	}
	out := protocol.Resources{Scalars: map[string]int64{}}
	for k, v := range demand.Scalars {
		out.Scalars[k] = v * int64(n)
	}
	return out.String()
}
