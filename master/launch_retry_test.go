package master

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestMaster_LaunchRetries: a launch whose agent reports nothing of the
// task (the command lost on its way) is sent again StatusRetryInterval
// after the launch, then after doubling waits; once the agent reports the
// task it is never sent again, and forgotten. The scans run by hand at
// chosen times (the interval is long enough that the leader's own scan
// never runs during the test).
func TestMaster_LaunchRetries(t *testing.T) {
	t.Parallel()
	const first = 3 * time.Minute
	m, nc := apiTestMaster(t, func(c *Config) { c.StatusRetryInterval = first })
	agent := registerTestAgent(t, nc)
	l := leaderOf(t, m)
	subject, err := l.subj.AgentCmd("", agent.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	cmds := record(t, nc, subject)
	inbox := &statusInbox{got: map[protocol.StatusUUID]int{}}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng", Suppressed: true, FailoverTimeout: time.Hour}, inbox.receive)
	launchOnFirstOffer(t, nc, fw.FrameworkID, &inbox.offerInbox, agent.AgentID, "t1")
	launches := func() int {
		n := 0
		for _, c := range all[protocol.LaunchCommand](cmds, protocol.MsgLaunchCommand) {
			if len(c.Tasks) == 1 && c.Tasks[0].TaskID == "t1" && c.FrameworkID == fw.FrameworkID {
				n++
			}
		}
		return n
	}
	waitFor(t, cmds, protocol.MsgLaunchCommand, func(protocol.LaunchCommand) bool { return true })
	task, ok := m.View().Task(fw.FrameworkID, "t1")
	if !ok || task.State != protocol.TaskStaging {
		t.Fatalf("t1 after its launch: %+v, want STAGING", task)
	}
	t0 := time.Unix(0, task.LaunchedAt)
	scan := func(at time.Duration, want int) {
		t.Helper()
		if got := l.retryLaunches(t0.Add(at)); got != want {
			t.Fatalf("scan at +%s resent %d launches, want %d", at, got, want)
		}
	}
	scan(first/2, 0) // not yet
	scan(first, 1)   // 3m after the launch
	scan(2*first, 0) // the next waits twice as long: 9m
	scan(3*first, 1)
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n := launches(); n != 3 {
			return fmt.Errorf("t1 launched %d times, want the first and two resends", n)
		}
		return nil
	})

	// The agent reports the task: never sent again, and forgotten.
	httpTestRequest(t, nc, viaBody, protocol.MsgStatusUpdateRequest, protocol.StatusUpdateRequest{
		AgentID: agent.AgentID, Updates: []protocol.StatusUpdate{{UUID: "u-starting", Status: protocol.TaskStatus{
			TaskID: "t1", FrameworkID: fw.FrameworkID, AgentID: agent.AgentID, State: protocol.TaskStarting, UUID: "u-starting"}}},
	}, nil)
	scan(time.Hour, 0)
	if n := len(l.launchRetries.due); n != 0 {
		t.Errorf("%d launches still watched after the agent reported the task", n)
	}
	if got := gatherSamples(t, m)["allot_launches_resent_total"]; got != 2 {
		t.Errorf("allot_launches_resent_total %v, want 2", got)
	}
	if n := launches(); n != 3 {
		t.Errorf("t1 launched %d times after the agent reported it, want 3", n)
	}
}
