package integration

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
)

// sameState waits until master m holds exactly the leader's state: the
// snapshot encoding is canonical, so equal bytes mean equal states.
func sameState(t *testing.T, c *testcluster.Cluster, m *master.Master) {
	t.Helper()
	testutil.WaitFor(t, 15*time.Second, 20*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return fmt.Errorf("no leader")
		}
		var want, got bytes.Buffer
		if _, err := l.View().WriteTo(&want); err != nil {
			return err
		}
		if _, err := m.View().WriteTo(&got); err != nil {
			return err
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			return fmt.Errorf("%s at index %d (%d tasks) differs from leader %s at %d (%d tasks)",
				m.ID(), m.View().Index(), m.View().NumTasks(), l.ID(), l.View().Index(), l.View().NumTasks())
		}
		return nil
	})
}

// runWork registers a framework that launches n tasks which keep running,
// and waits until they all run.
func runWork(t *testing.T, c *testcluster.Cluster, name string, n int64) {
	t.Helper()
	fw := c.NewFramework(testcluster.FrameworkOptions{
		Name: name, Role: "eng",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: n}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.RunUntilKilled(), Max: int(n)},
	})
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		running := 0
		for _, ft := range fw.Tasks() {
			if ft.Seen(protocol.TaskRunning) {
				running++
			}
		}
		if running < int(n) {
			return fmt.Errorf("%s: %d of %d tasks running", name, running, n)
		}
		return nil
	})
}

// TestCluster_RestartFromSnapshotOnDisk: every master snapshots, one is
// stopped, work goes on, and the restarted master (snapshot plus the log
// after it, from its own disk) holds the same state as the leader.
func TestCluster_RestartFromSnapshotOnDisk(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, TCPRaft: true, Agents: 2, AgentResources: agentResources(8)})
	runWork(t, c, "before", 4)
	for _, m := range c.Masters() {
		if err := m.Raft().TakeSnapshot(); err != nil {
			t.Fatalf("snapshot on %s: %v", m.ID(), err)
		}
	}
	// Stop a follower, so the cluster keeps its leader and moves on.
	stopped := (c.LeaderIndex() + 1) % 3
	c.Kill(stopped)
	runWork(t, c, "while-down", 3)
	m := c.Restart(stopped)
	sameState(t, c, m)
	if got := m.View().NumTasks(); got != 7 {
		t.Errorf("restarted master holds %d tasks, want 7", got)
	}
}

// TestCluster_JoinFromSnapshot: the leader snapshots and keeps no log
// behind it, so a master that comes back empty can only catch up by
// installing the snapshot; it then holds the same state as the leader.
func TestCluster_JoinFromSnapshot(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{
		Masters: 3, Agents: 2, AgentResources: agentResources(8),
		Configure: func(_ int, cfg *master.Config) { cfg.Raft.TrailingLogs = 0 },
	})
	c.WaitForLeader()
	stopped := (c.LeaderIndex() + 1) % 3
	c.Kill(stopped)
	runWork(t, c, "snapshotted", 5)
	for i, m := range c.Masters() {
		if i != stopped {
			if err := m.Raft().TakeSnapshot(); err != nil {
				t.Fatalf("snapshot on %s: %v", m.ID(), err)
			}
		}
	}
	// In memory, the restarted master has lost everything it had.
	m := c.Restart(stopped)
	sameState(t, c, m)
	if got := m.View().NumTasks(); got != 5 {
		t.Errorf("joined master holds %d tasks, want 5", got)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n := m.Raft().Stats()["last_snapshot_index"]; n == "0" || n == "" {
			return fmt.Errorf("joined master's last snapshot index is %q: it caught up from the log, not a snapshot", n)
		}
		return nil
	})
}
