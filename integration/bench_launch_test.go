package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// BenchmarkLaunchThroughput measures Raft-committed task launches per
// second through a three-master cluster (Raft over TCP on loopback, state
// on disk) with four test agents: four frameworks in two roles each launch
// 5,000 tasks of 10 milli-CPU / 1 MiB as fast as offers come, while the
// agents report every task STARTING and RUNNING through the same leader
// and the frameworks acknowledge every update. One op runs from the first
// subscribe until the leader's state holds all 20,000 launches; tasks/s is
// that rate. framework-s is how long until every framework has its accept
// replies (or a status) for all its tasks, which also waits out the status
// traffic the frameworks process. Raft runs with the production timeouts
// (the test cluster's are short so failover tests run fast; under this load
// they would cause needless elections).
func BenchmarkLaunchThroughput(b *testing.B) {
	perFw, fws := 5000, 4
	if testing.Short() {
		perFw = 100 // the smoke run (make bench-smoke)
	}
	rc := raftstore.DefaultConfig()
	task := protocol.Scalars(map[string]int64{protocol.ResCPUs: 10, protocol.ResMem: 1})
	var committed, known time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := testcluster.New(b, testcluster.Options{
			Masters: 3, TCPRaft: true,
			Roles:            map[string]float64{"eng": 2, "ads": 1},
			AgentTimeout:     10 * time.Minute,
			RequestTimeout:   30 * time.Second,
			HeartbeatTimeout: rc.HeartbeatTimeout, ElectionTimeout: rc.ElectionTimeout,
			LeaderLeaseTimeout: rc.LeaderLeaseTimeout, CommitTimeout: rc.CommitTimeout,
		})
		for range 4 {
			c.NewAgent(testcluster.AgentOptions{Resources: protocol.Scalars(map[string]int64{
				protocol.ResCPUs: 100_000, protocol.ResMem: 100_000})})
		}
		leader := c.WaitForLeader()
		b.StartTimer()
		start := time.Now()
		var frameworks []*testcluster.TestFramework
		for f := 0; f < fws; f++ {
			role := []string{"eng", "ads"}[f%2]
			frameworks = append(frameworks, c.NewFramework(testcluster.FrameworkOptions{
				Name: fmt.Sprintf("%s-%d", role, f), Role: role,
				Demand:     []protocol.TaskShape{{Resources: task, Count: int64(perFw)}},
				AutoLaunch: &testcluster.AutoLaunch{Resources: task, Behaviour: testcluster.RunUntilKilled(), Max: perFw},
			}))
		}
		waitFor(b, "the leader to commit every launch", func() (int, bool) {
			n := leader.View().NumTasks()
			return n, n >= perFw*fws
		})
		committed += time.Since(start)
		b.StopTimer()
		waitFor(b, "the frameworks to learn of every launch", func() (int, bool) {
			n := 0
			for _, fw := range frameworks {
				n += fw.Launched()
			}
			return n, n >= perFw*fws
		})
		known += time.Since(start)
		if got := leader.View().NumTasks(); got != perFw*fws {
			b.Fatalf("leader state holds %d tasks, want %d", got, perFw*fws)
		}
		c.Close() // an idle cluster left running would slow the next iteration
	}
	b.ReportMetric(float64(perFw*fws*b.N)/committed.Seconds(), "tasks/s")
	b.ReportMetric(known.Seconds()/float64(b.N), "framework-s")
}

// waitFor polls progress until it reports done, failing after two minutes.
func waitFor(b *testing.B, what string, progress func() (int, bool)) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, done := progress()
		if done {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("waiting for %s: %d after 2 minutes", what, n)
		}
		time.Sleep(2 * time.Millisecond) // polling counters, not synchronizing
	}
}
