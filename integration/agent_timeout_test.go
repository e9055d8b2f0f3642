package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
)

// TestAgentTimeout_MarkedWhenItEnds: with the shipped heartbeat of a
// second, an agent that stops is marked unreachable as its timeout ends
// after the last heartbeat the leader heard, not up to a heartbeat later
// (the leader looks again when the next agent's timeout ends). It fails
// with the leader looking only at its heartbeat ticks, which miss the
// bound below nine times in ten.
func TestAgentTimeout_MarkedWhenItEnds(t *testing.T) {
	t.Parallel()
	const heartbeat, timeout = time.Second, 3 * time.Second
	c := testcluster.New(t, testcluster.Options{Masters: 1, AgentHeartbeat: heartbeat, AgentTimeout: timeout})
	gone := executors.New(t, c, executors.Options{})
	stays := executors.New(t, c, executors.Options{})
	m := c.WaitForLeader()
	stalls := testutil.MeterStalls(t)
	stopped := time.Now()
	gone.Stop()
	var heard, marked int64
	testutil.WaitFor(t, timeout+2*heartbeat+testcluster.DefaultWait, 5*time.Millisecond, func() error {
		a, ok := m.View().Agent(gone.ID())
		if !ok {
			return fmt.Errorf("agent %s unknown", gone.ID())
		}
		if a.SilentSince != 0 {
			heard = a.SilentSince
		}
		if a.State != "unreachable" {
			return fmt.Errorf("agent %s is %s", gone.ID(), a.State)
		}
		marked = a.UnreachableAt
		return nil
	})
	if heard == 0 {
		t.Fatalf("agent %s was marked unreachable without its silence recorded first", gone.ID())
	}
	late := time.Duration(marked - heard)
	// The leader's timers wait as long as the machine kept this process
	// from running.
	stalled := stalls.Since(stopped)
	if bound := timeout + 100*time.Millisecond + stalled; late < timeout || late > bound {
		t.Errorf("agent marked unreachable %v after it was last heard, want between %v and %v (the process stalled %v)", late, timeout, bound, stalled)
	}
	if a, ok := m.View().Agent(stays.ID()); !ok || a.State != "active" {
		t.Errorf("heartbeating agent %s: %+v, want active", stays.ID(), a)
	}
}
