package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_MinorityPartition cuts the leader off from the other masters
// while a framework keeps launching tasks. The old leader, alone, can
// commit nothing, so no launch may reach an agent that the majority does
// not know; the majority elects a leader and carries on; after the heal the
// old leader catches up to the same state.
func TestCluster_MinorityPartition(t *testing.T) {
	t.Parallel()
	const total = 60
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	fw := c.NewFramework(testcluster.FrameworkOptions{
		Name:       "batch",
		Role:       "eng",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: total}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.Finish(50 * time.Millisecond), Max: total},
	})
	for range 2 {
		c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4)})
	}
	agents := c.Agents()
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := finished(fw); n < 10 {
			return fmt.Errorf("%d tasks finished, want 10 before the partition", n)
		}
		return nil
	})

	old := c.LeaderIndex()
	c.Partition(old)
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if i := c.LeaderIndex(); i < 0 || i == old {
			return fmt.Errorf("leader index %d, want a master of the majority (not %d)", i, old)
		}
		return nil
	})
	majority := c.Leader()
	t.Logf("partitioned %s; %s leads the majority", c.NodeID(old), majority.ID())

	// Every launch an agent received during and after the partition was
	// committed by the majority: the partitioned leader sent none it could
	// not commit.
	testutil.WaitFor(t, 15*time.Second, 10*time.Millisecond, func() error {
		if n := finished(fw); n < total {
			return fmt.Errorf("%d of %d tasks finished (launched %d)", n, total, fw.Launched())
		}
		return nil
	})
	leader := c.WaitForLeader()
	for _, a := range agents {
		for _, at := range a.Tasks() {
			if _, ok := leader.View().Task(at.Key.FrameworkID, at.Key.TaskID); ok {
				continue
			}
			// Finished and acknowledged tasks leave the state; their
			// framework must have seen them finish.
			if ft, ok := fw.Task(at.Key.TaskID); !ok || !ft.Seen(protocol.TaskFinished) {
				t.Errorf("agent %s ran %s, which the majority never committed", a.Hostname(), at.Key)
			}
		}
	}
	checkNoDuplicateLaunch(t, agents)

	c.Heal()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		want := c.Leader()
		if want == nil {
			return fmt.Errorf("no leader")
		}
		got := c.Master(old).View()
		if got.Index() < want.View().Index() || got.NumTasks() != want.View().NumTasks() ||
			len(got.Frameworks()) != len(want.View().Frameworks()) || len(got.Agents()) != len(want.View().Agents()) {
			return fmt.Errorf("healed %s at index %d with %d tasks, leader %s at %d with %d tasks",
				c.NodeID(old), got.Index(), got.NumTasks(), want.ID(), want.View().Index(), want.View().NumTasks())
		}
		return nil
	})
}
