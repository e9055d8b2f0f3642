package testcluster_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

func unit() protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 64})
}

func task(id string, b testcluster.Behaviour) protocol.TaskInfo {
	return protocol.TaskInfo{TaskID: protocol.TaskID(id), Resources: unit(),
		Command: protocol.CommandInfo{Value: "true"}, Labels: b.Labels()}
}

func TestCluster_LaunchFinish(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, Agents: 1})
	term := c.WaitForLeader().Raft().Stats()["term"]
	fw := c.NewFramework(testcluster.FrameworkOptions{Role: "eng"})
	launchOne(t, fw, task("t1", testcluster.Finish(10*time.Millisecond)))
	fw.WaitState("t1", protocol.TaskFinished)
	got := fw.Statuses("t1")
	want := []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished}
	if fmt.Sprint(distinctStates(got)) != fmt.Sprint(want) {
		t.Errorf("got states %v, want %v", statesOf(got), want)
	}
	// Acknowledged terminal tasks leave the replicated state, and the
	// master acknowledged every update to the agent.
	a := c.Agents()[0]
	testutil.WaitFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return fmt.Errorf("no leader serves")
		}
		if n := l.View().NumTasks(); n != 0 {
			return fmt.Errorf("leader holds %d tasks, want 0", n)
		}
		if n := a.Pending(); n != 0 {
			return fmt.Errorf("agent has %d updates not acknowledged", n)
		}
		return nil
	})
	// A new leader sends again a launch it cannot know was delivered.
	tasks := a.Tasks()
	once := c.WaitForLeader().Raft().Stats()["term"] == term
	if len(tasks) != 1 || tasks[0].Conflicts != 0 || tasks[0].Launches < 1 || once && tasks[0].Launches != 1 {
		t.Errorf("agent tasks %+v, want one launched once (or more across a leader change)", tasks)
	}
}

// launchOne launches a task on one of the framework's offers, trying
// again on fresh offers when a leadership change voided them (a launch
// that did commit after all answers ErrDuplicate).
func launchOne(t *testing.T, fw *testcluster.TestFramework, ti protocol.TaskInfo) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		offers := fw.Offers()
		if len(offers) == 0 {
			return errors.New("no offers")
		}
		if err := fw.Launch(offers[0], ti); err != nil && !errors.Is(err, protocol.ErrDuplicate) {
			return err
		}
		return nil
	})
}

// distinctStates drops repeated deliveries of the same update.
func distinctStates(sts []protocol.TaskStatus) []protocol.TaskState {
	var out []protocol.TaskState
	seen := map[protocol.StatusUUID]bool{}
	for _, s := range sts {
		if !seen[s.UUID] {
			seen[s.UUID] = true
			out = append(out, s.State)
		}
	}
	return out
}

func statesOf(sts []protocol.TaskStatus) []protocol.TaskState {
	out := make([]protocol.TaskState, len(sts))
	for i, s := range sts {
		out[i] = s.State
	}
	return out
}

func TestFramework_KillAndDecline(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1, Agents: 1})
	fw := c.NewFramework(testcluster.FrameworkOptions{})
	launchOne(t, fw, task("long", testcluster.RunUntilKilled()))
	fw.WaitState("long", protocol.TaskRunning)
	if err := fw.Kill("long"); err != nil {
		t.Fatal(err)
	}
	fw.WaitState("long", protocol.TaskKilled)

	// The whole agent comes back in offers; declining them with a long
	// filter keeps it away from this framework.
	var held []protocol.Offer
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		held = fw.Offers()
		var cpus int64
		for _, o := range held {
			cpus += o.Resources.Scalar(protocol.ResCPUs)
		}
		if want := testcluster.DefaultAgentResources().Scalar(protocol.ResCPUs); cpus != want {
			return fmt.Errorf("offers hold %d milli-CPUs, want the whole agent's %d", cpus, want)
		}
		return nil
	})
	if err := fw.Decline(time.Minute, held...); err != nil {
		t.Fatal(err)
	}
	if got := fw.Offers(); len(got) != 0 {
		t.Errorf("got %d outstanding offers after declining, want 0", len(got))
	}
}

func TestCluster_KillLeaderAndRestart(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	old := c.KillLeader()
	if c.Running(old) {
		t.Fatalf("master %d still runs after KillLeader", old)
	}
	leader := c.WaitForLeader()
	if leader.ID() == c.NodeID(old) {
		t.Fatalf("killed master %s leads again", leader.ID())
	}
	// The surviving pair commits; the restarted (empty, in-memory) master
	// catches up from the leader.
	a := c.NewAgent(testcluster.AgentOptions{})
	m := c.Restart(old)
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if _, ok := m.View().Agent(a.ID()); !ok {
			return fmt.Errorf("restarted master %s does not hold agent %s", m.ID(), a.ID())
		}
		return nil
	})
}

func TestCluster_TCPRestartFromDisk(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, TCPRaft: true, Agents: 1})
	a := c.Agents()[0]
	old := c.KillLeader()
	c.WaitForLeader()
	m := c.Restart(old)
	// The agent registered before the kill: the restarted master has it
	// from its own disk (and the log), not from a new registration.
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if _, ok := m.View().Agent(a.ID()); !ok {
			return fmt.Errorf("restarted master %s does not hold agent %s", m.ID(), a.ID())
		}
		return nil
	})
	if got := a.Registrations(); got != 1 {
		t.Errorf("agent registered %d times, want 1", got)
	}
}

func TestCluster_PartitionHeal(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	old := c.LeaderIndex()
	c.Partition(old)
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if i := c.LeaderIndex(); i < 0 || i == old {
			return fmt.Errorf("leader index %d, want a master other than %d", i, old)
		}
		return nil
	})
	a := c.NewAgent(testcluster.AgentOptions{})
	if _, ok := c.Master(old).View().Agent(a.ID()); ok {
		t.Errorf("partitioned master %s holds agent %s registered after the partition", c.NodeID(old), a.ID())
	}
	c.Heal()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if _, ok := c.Master(old).View().Agent(a.ID()); !ok {
			return fmt.Errorf("healed master %s does not hold agent %s", c.NodeID(old), a.ID())
		}
		return nil
	})
}
