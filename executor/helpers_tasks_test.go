//go:build linux

package executor

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// shellTask is a task running script with /bin/sh, with 100 milli-CPUs
// and 64 MiB.
func shellTask(id, script string) protocol.TaskInfo {
	return protocol.TaskInfo{
		TaskID:    protocol.TaskID(id),
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 100, protocol.ResMem: 64}),
		Command:   protocol.CommandInfo{Shell: true, Value: script},
	}
}

// waitScript is a task script that waits until the file "go" appears in
// its sandbox, then prints "done" and exits 0.
const waitScript = `echo started; while [ ! -e go ]; do sleep 0.02; done; echo done`

// usedOffers holds offers accepted behind their framework's back (see
// launchGroup), which it still lists as outstanding.
var usedOffers sync.Map

// offerOn waits for an outstanding offer of agent id that holds the
// tasks' resources.
func offerOn(t *testing.T, f *testcluster.TestFramework, id protocol.AgentID, tasks ...protocol.TaskInfo) protocol.Offer {
	t.Helper()
	var need protocol.Resources
	for _, ti := range tasks {
		need.AddInPlace(ti.Resources)
	}
	var offer protocol.Offer
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, o := range f.Offers() {
			if _, used := usedOffers.Load(o.ID); !used && o.AgentID == id && o.Resources.Contains(need) {
				offer = o
				return nil
			}
		}
		return fmt.Errorf("no offer on agent %s", id)
	})
	return offer
}

// launch launches tasks on an offer of agent id, on another offer if that
// one expired meanwhile.
func launch(t *testing.T, f *testcluster.TestFramework, id protocol.AgentID, tasks ...protocol.TaskInfo) {
	t.Helper()
	retryOffers(t, func() error { return f.Launch(offerOn(t, f, id, tasks...), tasks...) })
}

// retryOffers runs accept until it is not refused for a stale offer, nor
// sent while no leader listened (the masters may elect under load; nobody
// received that accept, and the next offer comes from the new leader).
func retryOffers(t *testing.T, accept func() error) {
	t.Helper()
	for range 10 {
		err := accept()
		if errors.Is(err, protocol.ErrUnknownOffer) || errors.Is(err, protocol.ErrOfferRescinded) ||
			errors.Is(err, nats.ErrNoResponders) {
			continue
		}
		if err != nil {
			t.Fatalf("launch: %v", err)
		}
		return
	}
	t.Fatal("launch: every offer tried was stale")
}

// waitState waits for a task status of state st and returns it.
func waitState(t *testing.T, f *testcluster.TestFramework, id string, st protocol.TaskState) protocol.TaskStatus {
	t.Helper()
	var out protocol.TaskStatus
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, s := range f.Statuses(protocol.TaskID(id)) {
			if s.State == st {
				out = s
				return nil
			}
		}
		return fmt.Errorf("task %s: got %v, want %s", id, states(f.Statuses(protocol.TaskID(id))), st)
	})
	return out
}

func states(sts []protocol.TaskStatus) []protocol.TaskState {
	out := make([]protocol.TaskState, len(sts))
	for i, s := range sts {
		out[i] = s.State
	}
	return out
}

// uniqueStates returns the states of a task's statuses with repeated
// deliveries of one update (same UUID) counted once.
func uniqueStates(sts []protocol.TaskStatus) []protocol.TaskState {
	seen := map[protocol.StatusUUID]bool{}
	var out []protocol.TaskState
	for _, s := range sts {
		if !seen[s.UUID] {
			seen[s.UUID] = true
			out = append(out, s.State)
		}
	}
	return out
}

// countState counts the distinct updates (UUIDs) and the deliveries of a
// state.
func countState(sts []protocol.TaskStatus, st protocol.TaskState) (updates, deliveries int) {
	seen := map[protocol.StatusUUID]bool{}
	for _, s := range sts {
		if s.State != st {
			continue
		}
		deliveries++
		if !seen[s.UUID] {
			seen[s.UUID] = true
			updates++
		}
	}
	return updates, deliveries
}

// agentTask returns the agent's summary of a task.
func agentTask(a *Agent, fw protocol.FrameworkID, id string) (TaskSummary, bool) {
	for _, ts := range a.State().Tasks {
		if ts.FrameworkID == fw && ts.TaskID == protocol.TaskID(id) {
			return ts, true
		}
	}
	return TaskSummary{}, false
}

// waitAgentTask waits until the agent reports a task in state st.
func waitAgentTask(t *testing.T, a *Agent, fw protocol.FrameworkID, id string, st protocol.TaskState) TaskSummary {
	t.Helper()
	var out TaskSummary
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		ts, ok := agentTask(a, fw, id)
		if !ok || ts.State != st {
			return fmt.Errorf("task %s on the agent: got %+v, want %s", id, ts, st)
		}
		out = ts
		return nil
	})
	return out
}

// testutilWaitFor polls check for up to wait.
func testutilWaitFor(t *testing.T, check func() error) {
	t.Helper()
	testutil.WaitFor(t, wait, 5*time.Millisecond, check)
}
