package integration

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
)

// TestMapReduce_AgentKilledDuringMaps stops an agent in the middle of a
// word count's map stage, once a map has finished on it: when the master
// marks the agent unreachable (one agent timeout later) it tells the
// frameworks, and the framework runs that agent's finished maps again at
// once, while the map stage still runs, instead of waiting for its
// reducers to fail to fetch their output. So the agent costs the job the
// agent timeout plus the maps' own time, and no reducer attempt fails.
func TestMapReduce_AgentKilledDuringMaps(t *testing.T) {
	t.Parallel()
	const agentTimeout = time.Second
	c := testcluster.New(t, testcluster.Options{Masters: 1, AgentTimeout: agentTimeout})
	agents := map[protocol.AgentID]*executors.Executor{}
	for i := range 3 {
		e := executors.New(t, c, executors.Options{
			Hostname:  fmt.Sprint("mr-", i),
			Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 2000, protocol.ResMem: 1024}),
		})
		agents[e.ID()] = e
	}
	// One task at a time per agent, and many small maps: the map stage
	// outlasts the agent timeout.
	r := startMapReduceBinary(t, c, exampleBinaryNoRace(t, "mapreduce"),
		"--jobs", "wordcount:64MB@analytics", "--split-size", "1MB", "--reducers", "2", "--cpus", "2000", "--mem", "64")
	mapDone := regexp.MustCompile(`\] wordcount-1: map (\d+) finished on (\S+) \((\d+)/64\)`)
	var stopped protocol.AgentID
	var stoppedAt, rerunAt time.Time
	var rerun *regexp.Regexp
	for line := range r.lines {
		if rerun != nil && rerunAt.IsZero() && rerun.MatchString(line) {
			rerunAt = time.Now()
		}
		m := mapDone.FindStringSubmatch(line)
		if m == nil || stopped != "" {
			continue
		}
		stopped = protocol.AgentID(m[2])
		e, ok := agents[stopped]
		if !ok {
			t.Fatalf("map %s finished on unknown agent %s", m[1], stopped)
		}
		e.Stop()
		stoppedAt = time.Now()
		rerun = regexp.MustCompile(`wordcount-1: map \d+ runs again: its output was on agent ` + regexp.QuoteMeta(string(stopped)))
		t.Logf("map %s finished on %s (%s/64 maps done): agent stopped", m[1], stopped, m[3])
	}
	if stopped == "" {
		t.Fatal("no map task finished")
	}
	out := r.wait(t)
	checkVerified(t, out, "wordcount-1")
	if rerunAt.IsZero() {
		t.Fatalf("no map ran again when agent %s was lost:\n%s", stopped, out)
	}
	// The framework heard of the loss when the master did: one agent
	// timeout after the agent's last heartbeat, and a little more on a
	// loaded machine.
	if took := rerunAt.Sub(stoppedAt); took > agentTimeout+3*time.Second {
		t.Errorf("the lost agent's maps ran again %v after it stopped; want within the agent timeout (%v) and a little", took, agentTimeout)
	} else {
		t.Logf("the lost agent's maps ran again %v after it stopped (agent timeout %v)", took, agentTimeout)
	}
	if regexp.MustCompile(`could not fetch its output`).MatchString(out) {
		t.Errorf("a reducer failed to fetch a lost map's output; the maps should have run again before reducers started:\n%s", out)
	}
}
