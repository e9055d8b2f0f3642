package framework_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// waitLaunch waits until the gang has launched n times and every task of
// that launch runs, and returns those tasks.
func waitLaunch(t *testing.T, s *gangScheduler, n int) []protocol.TaskInfo {
	t.Helper()
	var tasks []protocol.TaskInfo
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if got := s.gang.Launches(); got != n {
			return fmt.Errorf("%d launches, want %d (attempt %d, holding %d offers)", got, n, s.gang.Attempt(), s.gang.Held())
		}
		tasks = s.gang.Tasks()
		if len(tasks) == 0 {
			return errors.New("no tasks in the current launch")
		}
		return nil
	})
	for _, ti := range tasks {
		s.WaitState(t, ti.TaskID, protocol.TaskRunning)
	}
	return tasks
}

func taskIDs(tasks []protocol.TaskInfo) []protocol.TaskID {
	out := make([]protocol.TaskID, len(tasks))
	for i, ti := range tasks {
		out[i] = ti.TaskID
	}
	slices.Sort(out)
	return out
}

// agentOf returns the test agent running ti.
func agentOf(t *testing.T, c *testcluster.Cluster, ti protocol.TaskInfo) *testcluster.TestAgent {
	t.Helper()
	for _, a := range c.Agents() {
		if a.ID() == ti.AgentID {
			return a
		}
	}
	t.Fatalf("no agent %s", ti.AgentID)
	return nil
}

// TestGang_RelaunchWhenWarned: a warning naming one member of a launched
// gang loses the whole gang: the gang kills both members and launches
// them again under new IDs. A member that then fails, with no relaunch
// left, fails the gang with ErrGangLost and its other member is killed.
func TestGang_RelaunchWhenWarned(t *testing.T) {
	c := rackCluster(t, 2)
	s, r := startGang(t, c, framework.GangSpec{
		GroupID: "g", Tasks: gangTasks("m", 2, unit(), testcluster.RunUntilKilled()),
		Constraints: []protocol.Constraint{uniqueRack}, Timeout: wait, Relaunch: 1,
	}, framework.WithCapabilities(protocol.CapGang))
	first := waitLaunch(t, s, 1)
	if got := taskIDs(first); !slices.Equal(got, []protocol.TaskID{"m-0", "m-1"}) {
		t.Fatalf("first launch %v, want m-0 and m-1", got)
	}
	select {
	case <-s.gang.Done():
		t.Fatalf("a relaunching gang is done once launched: %v", s.gang.Err())
	default:
	}

	publishPreemption(t, c, r.d, protocol.PreemptionEvent{Deadline: time.Now().Add(time.Minute).UnixNano(),
		Tasks: []protocol.PreemptedTask{{TaskID: first[0].TaskID, AgentID: first[0].AgentID, Reason: protocol.ReasonPreempted}}})
	for _, ti := range first {
		s.WaitState(t, ti.TaskID, protocol.TaskKilled)
	}
	second := waitLaunch(t, s, 2)
	if got := taskIDs(second); !slices.Equal(got, []protocol.TaskID{"m-0.r1", "m-1.r1"}) {
		t.Fatalf("relaunch %v, want m-0.r1 and m-1.r1", got)
	}

	failed, other := second[0], second[1]
	if !agentOf(t, c, failed).End(testcluster.TaskKey{FrameworkID: r.d.ID(), TaskID: failed.TaskID}, protocol.TaskFailed) {
		t.Fatalf("task %s not running on its agent", failed.TaskID)
	}
	if err := waitGang(t, s.gang); !errors.Is(err, framework.ErrGangLost) {
		t.Fatalf("gang error %v, want %v", err, framework.ErrGangLost)
	}
	s.WaitState(t, other.TaskID, protocol.TaskKilled)
	if n := s.gang.Launches(); n != 2 {
		t.Fatalf("%d launches, want 2", n)
	}
	if errs := s.failures(); len(errs) != 0 {
		t.Fatalf("scheduler errors %v", errs)
	}
}

// TestGang_RelaunchDoneWhenFinished: a relaunching gang is done, without
// error, once all its members have finished.
func TestGang_RelaunchDoneWhenFinished(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	s, _ := startGang(t, c, framework.GangSpec{
		GroupID: "g", Tasks: gangTasks("m", 2, unit(), testcluster.Finish(200*time.Millisecond)),
		Timeout: wait, Relaunch: -1,
	})
	if err := waitGang(t, s.gang); err != nil {
		t.Fatalf("gang error %v, want none", err)
	}
	// The gang sees each status before the scheduler does.
	for _, id := range []protocol.TaskID{"m-0", "m-1"} {
		testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
			if st := s.Statuses(id); len(st) == 0 || st[len(st)-1].State != protocol.TaskFinished {
				return fmt.Errorf("task %s: statuses %v, want FINISHED last", id, states(st))
			}
			return nil
		})
	}
	if n := s.gang.Launches(); n != 1 {
		t.Fatalf("%d launches, want 1", n)
	}
}
