package integration

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// TestAgent_FrameworkFailover disconnects two SDK frameworks whose tasks
// run on a real agent. The one with a one-second failover timeout stays
// away: the master removes it and the agent kills its task. The one with
// a one-minute timeout comes back under its ID with a new driver, learns
// of its still running task by reconciliation, and kills it.
func TestAgent_FrameworkFailover(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	e := executors.New(t, c, executors.Options{})
	// Both run a task with the same ID (task IDs are per framework), and
	// declare it as their demand, so that the first to subscribe is not
	// offered the whole agent.
	svc := shTask("svc", "sleep 1000")
	start := func(opts ...framework.Option) *sdkFramework {
		rec := newRecorder()
		d := newDriver(t, c, rec, opts...)
		if err := d.Demand(sdkCtx(t), placement.ShapeOf(svc, 1)); err != nil {
			t.Fatal(err)
		}
		return runDriver(t, d, rec)
	}
	keep := start(framework.WithName("keep"), framework.WithFailoverTimeout(time.Minute))
	brief := start(framework.WithName("brief"), framework.WithFailoverTimeout(time.Second))
	keepID, briefID := keep.d.ID(), brief.d.ID()
	keep.launch(t, e.ID(), svc)
	brief.launch(t, e.ID(), svc)
	keep.rec.WaitState(t, "svc", protocol.TaskRunning)
	brief.rec.WaitState(t, "svc", protocol.TaskRunning)

	// Both schedulers go away.
	for _, f := range []*sdkFramework{keep, brief} {
		if err := f.stop(t); err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	}
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader serves")
		}
		if fr, ok := l.View().Framework(keepID); !ok || fr.Connected {
			return fmt.Errorf("keep not recorded as disconnected: %+v", fr)
		}
		return nil
	})

	// brief's failover timeout runs out: removed, its task killed.
	testutil.WaitFor(t, sdkWait, 10*time.Millisecond, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader serves")
		}
		if _, ok := l.View().Framework(briefID); ok {
			return errors.New("brief still registered")
		}
		return nil
	})
	ts := waitAgentTask(t, e, briefID, "svc", protocol.TaskKilled)
	if ts.Reason != protocol.ReasonFrameworkRemoved {
		t.Errorf("brief's task: got %s %q, want framework_removed", ts.Reason, ts.Message)
	}

	// keep is still there, and so is its task.
	if fr, ok := c.WaitForLeader().View().Framework(keepID); !ok || fr.Connected {
		t.Fatalf("keep in the leader: %+v (known %v), want disconnected", fr, ok)
	}
	if ts, ok := agentTask(e, keepID, "svc"); !ok || ts.State != protocol.TaskRunning {
		t.Fatalf("keep's task on the agent: %+v, want RUNNING", ts)
	}
	rec := newRecorder()
	back := runDriver(t, newDriver(t, c, rec, framework.WithName("keep"), framework.WithFailoverTimeout(time.Minute),
		framework.WithFrameworkID(keepID)), rec)
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		if got := rec.RegisteredIDs(); !slices.Equal(got, []protocol.FrameworkID{keepID}) {
			return fmt.Errorf("registered as %v, want %s", got, keepID)
		}
		return nil
	})
	rec.WaitStatus(t, "svc", "RUNNING from reconciliation", func(st sdktest.Arrival) bool {
		return st.State == protocol.TaskRunning && st.Reason == protocol.ReasonReconciliation && st.UUID == ""
	})
	if err := back.d.Kill(sdkCtx(t), "svc", "", 0); err != nil {
		t.Fatal(err)
	}
	st := rec.WaitUpdate(t, "svc", protocol.TaskKilled)
	if st.Reason != protocol.ReasonKilledByFramework || st.UUID == "" {
		t.Errorf("keep's task: got %s uuid %q, want an update with killed_by_framework", st.Reason, st.UUID)
	}
	waitAgentTask(t, e, keepID, "svc", protocol.TaskKilled)
	if fr, ok := c.WaitForLeader().View().Framework(keepID); !ok || !fr.Connected {
		t.Errorf("keep in the leader: %+v (known %v), want connected", fr, ok)
	}
	if errs := rec.Errors(); len(errs) > 0 {
		t.Errorf("scheduler errors: %v", errs)
	}
}
