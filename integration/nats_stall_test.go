package integration

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// TestNATSStall_ClientsMoveOn runs three `allot master` processes with
// their shipped defaults and connects an agent and a framework through
// one follower's NATS server only; then stops that master with SIGSTOP for
// thirty seconds. A paused server keeps its sockets open and answers
// nothing: the clients must notice and carry on through another master's
// server, so the framework launches again within five seconds and the
// agent stays active throughout.
func TestNATSStall_ClientsMoveOn(t *testing.T) {
	t.Parallel()
	const pause, launchWithin = 30 * time.Second, 5 * time.Second
	procs := testcluster.StartProcs(t, allotBinary(t), testcluster.ProcOptions{Masters: 3})
	stalled := procs.Masters[(procs.WaitForLeader()+1)%3]
	agentProc := procs.StartAgent(testutil.FreePort(t), []string{stalled.NATS})
	var agent protocol.AgentID
	testutil.WaitFor(t, sdkWait, 20*time.Millisecond, func() error {
		var st executor.StateResponse
		if err := testcluster.GetJSON("http://"+agentProc.HTTP+"/v1/state", &st); err != nil || !st.Registered {
			return fmt.Errorf("agent not registered yet (%v)", err)
		}
		agent = st.AgentID
		return nil
	})
	rec := newRecorder()
	d, err := framework.NewDriver(rec, framework.WithNATSURLs(stalled.NATS), framework.WithName("stall"),
		framework.WithLogger(testlog.New(t)), framework.WithRequestTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	f := runDriver(t, d, rec)
	f.launch(t, agent, shTask("before", "true"))
	f.rec.WaitState(t, "before", protocol.TaskFinished)

	stalls := testutil.MeterStalls(t)
	stalled.Pause()
	paused := time.Now()
	t.Cleanup(stalled.Resume)
	launched, id := launchUntil(t, f, agent, shTask("during", "true"), paused.Add(pause))
	took := launched.Sub(paused)
	t.Logf("launched %s %v after the pause", id, took.Round(time.Millisecond))
	// The framework runs in this process: a machine whose cores other work
	// holds delays it as long as it kept the process from running.
	if stalledFor := stalls.Since(paused); took > launchWithin+stalledFor {
		t.Errorf("the framework launched %v after its server was paused, want within %v and the %v the process was stalled",
			took.Round(time.Millisecond), launchWithin, stalledFor)
	}
	f.rec.WaitState(t, id, protocol.TaskFinished)
	// The agent stays active while its first server stays paused.
	for time.Now().Before(paused.Add(pause)) {
		var st api.State
		err := procs.State(&st)
		if err != nil {
			t.Logf("reading the leader's state: %v", err)
		}
		for _, a := range st.Agents {
			if a.ID == agent && a.State != "active" {
				t.Fatalf("agent %s is %s %v after its server was paused", agent, a.State, time.Since(paused).Round(time.Millisecond))
			}
		}
		select {
		case <-time.After(250 * time.Millisecond): // a sampling period, not a synchronisation
		case <-t.Context().Done():
			return
		}
	}
	stalled.Resume()
}

// launchUntil launches task on a fresh offer of agent, again and again
// (under a new ID after an ambiguous launch the leader never committed)
// until the leader accepts it or deadline passes; it returns when and
// under which ID.
func launchUntil(t *testing.T, f *sdkFramework, agent protocol.AgentID, task protocol.TaskInfo, deadline time.Time) (time.Time, protocol.TaskID) {
	t.Helper()
	base := task.TaskID
	var last error
	for try := 1; time.Now().Before(deadline); {
		var offer *protocol.Offer
		for _, o := range f.d.Offers() {
			if o.AgentID == agent && o.Resources.Contains(task.Resources) {
				offer = &o
				break
			}
		}
		if offer == nil {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-t.Context().Done():
				t.Fatal(t.Context().Err())
			}
			continue
		}
		task.TaskID = protocol.TaskID(fmt.Sprintf("%s-%d", base, try))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = f.d.Launch(ctx, []protocol.OfferID{offer.ID}, task)
		cancel()
		if last == nil {
			return time.Now(), task.TaskID
		}
		if errors.Is(last, framework.ErrAmbiguous) {
			// Reconciliation settles it: unknown to the leader, or
			// under way.
			st := f.rec.WaitStatus(t, task.TaskID, "any", func(sdktest.Arrival) bool { return true })
			if st.State != protocol.TaskLost {
				return st.At, task.TaskID
			}
		}
		try++
	}
	t.Fatalf("task %s not launched before %v: %v", base, deadline, last)
	return time.Time{}, ""
}
