package integration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_LeaderFailover kills the leader while tasks run and status
// updates are in flight. A new leader must serve within seconds, agents and
// frameworks must carry on by themselves (retrying while nobody answers,
// re-subscribing when the new leader announces itself), no task may be
// lost or launched twice, and every status update an agent sent must reach
// its framework at least once.
func TestCluster_LeaderFailover(t *testing.T) {
	t.Parallel()
	const (
		perFw       = 40
		killAfter   = 10 // finished tasks per framework before the kill
		maxFailover = 5 * time.Second
	)
	c := testcluster.New(t, testcluster.Options{
		Masters: 3,
		Roles:   map[string]float64{"eng": 2, "ads": 1},
	})
	newFw := func(role string) *testcluster.TestFramework {
		return c.NewFramework(testcluster.FrameworkOptions{
			Name:       role,
			Role:       role,
			Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: perFw}},
			AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Behaviour: testcluster.Finish(100 * time.Millisecond), Max: perFw},
		})
	}
	fws := []*testcluster.TestFramework{newFw("eng"), newFw("ads")}
	for range 2 {
		c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4)})
	}
	agents := c.Agents()

	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		for _, fw := range fws {
			if n := finished(fw); n < killAfter {
				return fmt.Errorf("%s: %d tasks finished, want %d before the kill", fw.Name(), n, killAfter)
			}
		}
		return nil
	})
	running := runningCPUs(agents)
	killed := c.KillLeader()
	start := time.Now()
	t.Logf("killed leader %s with %v milli-CPUs of tasks running", c.NodeID(killed), running)
	leader := c.WaitForLeader()
	if took := time.Since(start); took > maxFailover {
		t.Errorf("new leader %s serves %s after the kill, want under %s", leader.ID(), took, maxFailover)
	} else {
		t.Logf("new leader %s serves %s after the kill", leader.ID(), took)
	}

	testutil.WaitFor(t, 15*time.Second, 10*time.Millisecond, func() error {
		for _, fw := range fws {
			if n := finished(fw); n < perFw {
				return fmt.Errorf("%s: %d tasks finished, want %d; unfinished (launched %d): %v",
					fw.Name(), n, perFw, fw.Launched(), unfinished(fw))
			}
			if n := fw.PendingAcks(); n > 0 {
				return fmt.Errorf("%s: %d acknowledgements pending", fw.Name(), n)
			}
		}
		for _, a := range agents {
			if n := a.Pending(); n > 0 {
				return fmt.Errorf("agent %s: %d status updates not acknowledged", a.Hostname(), n)
			}
		}
		l := c.Leader()
		if l == nil {
			return fmt.Errorf("no leader serves")
		}
		if n := l.View().NumTasks(); n != 0 {
			return fmt.Errorf("leader state still holds %d tasks", n)
		}
		return nil
	})

	// The frameworks and agents reconnected by themselves (to the leader
	// that serves now: under load there may have been more elections).
	leader = c.WaitForLeader()
	for _, fw := range fws {
		if fw.Subscriptions() < 2 || fw.LeaderID() != leader.ID() {
			t.Errorf("%s subscribed %d times, last to %s; want a re-subscription to %s",
				fw.Name(), fw.Subscriptions(), fw.LeaderID(), leader.ID())
		}
	}
	checkNothingLost(t, agents, fws)
	for _, a := range agents {
		if r := a.Refused(); len(r) > 0 {
			t.Errorf("agent %s: master refused updates %+v", a.Hostname(), r)
		}
	}
	if doc := httpState(t, c); len(doc.Tasks) != 0 || len(doc.Frameworks) != len(fws) {
		t.Errorf("GET /v1/state after the failover: %d tasks and %d frameworks, want 0 and %d",
			len(doc.Tasks), len(doc.Frameworks), len(fws))
	}
}

// checkNothingLost checks, once every task has ended, the tasks the agents
// ran against what the frameworks fws saw: none launched twice or lost,
// no update missing.
func checkNothingLost(t *testing.T, agents []*testcluster.TestAgent, fws []*testcluster.TestFramework) {
	t.Helper()
	// No task launched twice; every task an agent ran reached its framework
	// as FINISHED, and every update the agent sent arrived at least once,
	// but for an intermediate one the killed leader committed and had not
	// forwarded yet: the master keeps each task's latest status until the
	// framework acknowledges it, and a later one supersedes it.
	launched := checkNoDuplicateLaunch(t, agents)
	byName := map[protocol.FrameworkID]*testcluster.TestFramework{}
	for _, fw := range fws {
		byName[fw.ID()] = fw
	}
	for k, at := range launched {
		fw := byName[k.FrameworkID]
		ft, ok := fw.Task(k.TaskID)
		if !ok {
			t.Errorf("task %s ran on an agent but its framework never heard of it", k)
			continue
		}
		if !ft.Seen(protocol.TaskFinished) {
			t.Errorf("task %s: framework saw %v, want FINISHED", k, stateList(ft.Statuses))
		}
		for i, u := range at.Sent {
			if slices.ContainsFunc(ft.Statuses, func(s protocol.TaskStatus) bool { return s.UUID == u.UUID }) {
				continue
			}
			if i < len(at.Sent)-1 && supersededBy(ft.Statuses, u.Status.State) {
				continue
			}
			t.Errorf("task %s: update %s (%s) never reached the framework (got %v)",
				k, u.UUID, u.Status.State, stateList(ft.Statuses))
		}
	}
	// No launch lost: every launch the leader confirmed ran on an agent.
	for _, fw := range fws {
		for _, ft := range fw.Tasks() {
			k := testcluster.TaskKey{FrameworkID: fw.ID(), TaskID: ft.Info.TaskID}
			if _, ran := launched[k]; ft.Outcome == testcluster.AcceptOK && !ran {
				t.Errorf("task %s: launch confirmed (statuses %v) but no agent ran it", k, stateList(ft.Statuses))
			}
		}
		checkTaskEnds(t, fw, false)
	}
}

// supersededBy reports whether the framework saw a state that follows st
// in a task's life: the status st was replaced before it was forwarded.
func supersededBy(seen []protocol.TaskStatus, st protocol.TaskState) bool {
	for _, s := range seen {
		switch {
		case s.State.Terminal() && !st.Terminal():
			return true
		case st == protocol.TaskStarting && s.State == protocol.TaskRunning:
			return true
		}
	}
	return false
}
