package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// BenchmarkLaunchThroughput measures Raft-committed task launches per
// second through a three-master cluster (Raft over TCP on loopback, state
// on disk) with four test agents: four frameworks in two roles each launch
// 5,000 tasks of 10 milli-CPU / 1 MiB as fast as offers come, while the
// agents report every task STARTING and RUNNING through the same leader.
// One op is all 20,000 launches committed; tasks/s is the rate.
func BenchmarkLaunchThroughput(b *testing.B) {
	const perFw, fws = 5000, 4
	task := protocol.Scalars(map[string]int64{protocol.ResCPUs: 10, protocol.ResMem: 1})
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := testcluster.New(b, testcluster.Options{
			Masters: 3, TCPRaft: true,
			Roles:          map[string]float64{"eng": 2, "ads": 1},
			AgentTimeout:   10 * time.Minute,
			RequestTimeout: 30 * time.Second,
		})
		for range 4 {
			c.NewAgent(testcluster.AgentOptions{Resources: protocol.Scalars(map[string]int64{
				protocol.ResCPUs: 100_000, protocol.ResMem: 100_000})})
		}
		b.StartTimer()
		start := time.Now()
		var frameworks []*testcluster.TestFramework
		for f := 0; f < fws; f++ {
			role := []string{"eng", "ads"}[f%2]
			frameworks = append(frameworks, c.NewFramework(testcluster.FrameworkOptions{
				Name: fmt.Sprintf("%s-%d", role, f), Role: role,
				Demand:     []protocol.TaskShape{{Resources: task, Count: perFw}},
				AutoLaunch: &testcluster.AutoLaunch{Resources: task, Behaviour: testcluster.RunUntilKilled(), Max: perFw},
			}))
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			n := 0
			for _, fw := range frameworks {
				n += fw.Launched()
			}
			if n >= perFw*fws {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d tasks launched after 2 minutes", n, perFw*fws)
			}
			time.Sleep(5 * time.Millisecond) // polling the counters, not synchronizing
		}
		total += time.Since(start)
		b.StopTimer()
		if got := c.WaitForLeader().View().NumTasks(); got != perFw*fws {
			b.Fatalf("leader state holds %d tasks, want %d", got, perFw*fws)
		}
	}
	b.ReportMetric(float64(perFw*fws*b.N)/total.Seconds(), "tasks/s")
}
