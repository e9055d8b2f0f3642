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
	stages    []stageReport
	// outputs are where the results are: the output directory, or each
	// reducer's output file on its agent's file server.
	outputs  []string
	verified bool
	verdict  string
	err      error
}

// stageReport is one stage's time and its tasks' summed counters.
type stageReport struct {
	stageTime
	Counters taskCounters
}

// shuffle is the reducers' summed fetches.
func (r jobReport) shuffle() shuffleStats {
	for _, s := range r.stages {
		if s.Counters.Shuffle != nil {
			return *s.Counters.Shuffle
		}
	}
	return shuffleStats{}
}

// finished reports whether every task of the job finished.
func (r jobReport) finished() bool { return r.ended && r.res.Err == nil }

// String renders the report as a few lines: the job, its completion
// time, its stages' times and counters, its tasks on fair and leftover
// offers, its shuffle, where its output is, and its check.
func (r jobReport) String() string {
	var b strings.Builder
	s := r.job.spec
	input := "generated, " + formatSize(s.Size)
	if len(r.job.src.paths) > 0 {
		input = strings.Join(r.job.src.paths, ",") + ", " + formatSize(s.Size)
	}
	fmt.Fprintf(&b, "job %s [%s] %s (%s), %s, %s: ", s.ID, r.role, s.Kind, input, plural(s.Maps, "map"),
		plural(s.Reducers, "reducer"))
	if r.finished() {
		fmt.Fprintf(&b, "JCT %s\n", r.res.JCT.Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "FAILED: %v\n", r.err)
	}
	fmt.Fprintf(&b, "  tasks: %d on fair offers, %d on leftover offers (leftover used: %s), %d failed attempts\n",
		r.res.FairTasks, r.res.LeftoverTasks, times(r.demand, r.res.LeftoverTasks), r.res.Failures)
	if !r.finished() {
		return b.String()
	}
	for _, st := range r.stages {
		c := st.Counters
		fmt.Fprintf(&b, "  %s: %s in %s; in %d records (%s), out %d records (%s); %d spills (%s); peak memory %s (agents: %s) of %s\n",
			st.Name, plural(st.Tasks, "task"), st.Time.Round(time.Millisecond), c.RecordsIn, formatSize(c.BytesIn),
			c.RecordsOut, formatSize(c.BytesOut), c.Spills, formatSize(c.SpilledBytes), formatSize(c.PeakRSS),
			formatSize(c.AgentPeak), formatSize(c.MemoryLimit))
	}
	sh := r.shuffle()
	fmt.Fprintf(&b, "  shuffle: %d partition files, %d from other agents (%s of %s); maps ran on %s\n",
		sh.Partitions, sh.Remote, formatSize(sh.RemoteBytes), formatSize(sh.Bytes), plural(r.mapAgents, "agent"))
	if len(r.outputs) == 1 {
		fmt.Fprintf(&b, "  output: %s\n", r.outputs[0])
	} else {
		fmt.Fprintf(&b, "  output: in the reducers' sandboxes:\n")
		for _, o := range r.outputs {
			fmt.Fprintf(&b, "    %s\n", o)
		}
	}
	switch {
	case r.err != nil:
		fmt.Fprintf(&b, "  MISMATCH: %v\n", r.err)
	case r.verified:
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
