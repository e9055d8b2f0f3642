package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_ReregisterRelaunchesStaging covers a launch lost on its way
// to the agent (or still in flight when the agent built its reregistration
// report): the agent reregisters without the task, and the leader sends the
// launch again instead of giving the task up, so it runs once.
func TestCluster_ReregisterRelaunchesStaging(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	agent := c.NewAgent(testcluster.AgentOptions{Resources: agentResources(2), DropLaunches: 1,
		Behaviour: testcluster.RunUntilKilled()})
	fw := c.NewFramework(testcluster.FrameworkOptions{Name: "fw", Role: "eng",
		Demand: []protocol.TaskShape{{Resources: unitTask(), Count: 1}}})
	offer := fw.WaitOffers(1)[0]
	task := protocol.TaskInfo{TaskID: "t1", Resources: unitTask(),
		Command: protocol.CommandInfo{Shell: true, Value: "true"}}
	if err := fw.Launch(offer, task); err != nil {
		t.Fatal(err)
	}
	leader := c.WaitForLeader()
	if st, ok := leader.View().Task(fw.ID(), "t1"); !ok || st.State != protocol.TaskStaging {
		t.Fatalf("leader holds %+v, want t1 STAGING (its launch was dropped)", st)
	}

	agent.Reregister()
	fw.WaitState("t1", protocol.TaskRunning)
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		for _, at := range agent.Tasks() {
			if at.Key.TaskID == "t1" {
				// The agent starts a task once however often its launch
				// arrives (a leader change also resends it).
				if at.Launches < 1 || at.Conflicts != 0 {
					return fmt.Errorf("t1 delivered %d times with %d conflicts", at.Launches, at.Conflicts)
				}
				return nil
			}
		}
		return fmt.Errorf("agent does not run t1")
	})
	for _, st := range fw.Statuses("t1") {
		if st.State == protocol.TaskDropped || st.State == protocol.TaskLost {
			t.Errorf("framework saw %s (%s) for t1, want it relaunched", st.State, st.Reason)
		}
	}
}
