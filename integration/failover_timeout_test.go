package integration

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_FailoverTimeoutSurvivesLeaderFailover: a framework's
// failover timer starts when it disconnects and keeps running across a
// master failover, because the disconnect time is replicated. The new
// leader removes the framework and kills its task when the timeout runs
// out counted from the disconnect, not from its own election.
func TestCluster_FailoverTimeoutSurvivesLeaderFailover(t *testing.T) {
	t.Parallel()
	const (
		failover = 3 * time.Second
		killAt   = failover / 2 // leader killed this long after the disconnect
		// Removal may trail the deadline by this much: a check every
		// heartbeat, then a Raft commit that takes most of a second on
		// a loaded two-core machine.
		late = 2 * time.Second
	)
	c := testcluster.New(t, testcluster.Options{Masters: 3, Agents: 1})
	agent := c.Agents()[0]
	fw := c.NewFramework(testcluster.FrameworkOptions{Name: "svc", FailoverTimeout: failover})
	id := fw.ID()
	launchOne(t, fw, protocol.TaskInfo{TaskID: "server", Resources: unitTask(),
		Command: protocol.CommandInfo{Value: "serve"}, Labels: testcluster.RunUntilKilled().Labels()})
	fw.WaitState("server", protocol.TaskRunning)

	// The scheduler goes away: its events subject loses its listener.
	fw.Close()
	var disconnectedAt time.Time
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader serves")
		}
		f, ok := l.View().Framework(id)
		if !ok || f.Connected || f.DisconnectedAt == 0 {
			return fmt.Errorf("framework %s not recorded as disconnected: %+v", id, f)
		}
		disconnectedAt = time.Unix(0, f.DisconnectedAt)
		return nil
	})
	// Until half the timeout has passed the framework and its task stay.
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if f, ok := c.WaitForLeader().View().Framework(id); !ok || f.Connected {
			t.Fatalf("framework %s removed or reconnected %s after its disconnect, before its failover timeout %s",
				id, time.Since(disconnectedAt), failover)
		}
		if since := time.Since(disconnectedAt); since < killAt {
			return fmt.Errorf("%s since the disconnect", since)
		}
		return nil
	})
	killed := c.KillLeader()
	leader := c.WaitForLeader()
	t.Logf("killed leader %s %s after the disconnect; %s leads", c.NodeID(killed), time.Since(disconnectedAt), leader.ID())

	var removedAt time.Time
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader serves")
		}
		if _, ok := l.View().Framework(id); ok {
			return fmt.Errorf("framework %s still registered %s after its disconnect", id, time.Since(disconnectedAt))
		}
		removedAt = time.Now()
		return nil
	})
	took := removedAt.Sub(disconnectedAt)
	if took < failover || took > failover+late {
		t.Errorf("framework removed %s after its disconnect, want %s to %s", took, failover, failover+late)
	}
	t.Logf("framework removed %s after its disconnect (failover timeout %s)", took, failover)
	// Its task was killed on the agent.
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		for _, at := range agent.Tasks() {
			if at.Key.FrameworkID == id && at.State != protocol.TaskKilled {
				return fmt.Errorf("task %s is %s on the agent, want KILLED", at.Key, at.State)
			}
		}
		return nil
	})
}
