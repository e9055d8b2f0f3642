package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testutil"
)

// TestAgentLiveness_AcrossElections stops an agent for good while the
// leader is killed (and restarted) every five seconds, more often than
// the agent timeout of six: each new leader must go on counting the
// agent's silence where its predecessor stopped, so the agent is marked
// unreachable within its timeout plus five seconds, while the agents that
// still heartbeat stay active.
func TestAgentLiveness_AcrossElections(t *testing.T) {
	t.Parallel()
	const timeout, period = 6 * time.Second, 5 * time.Second
	c := testcluster.New(t, testcluster.Options{Masters: 3, AgentTimeout: timeout})
	var agents []*executors.Executor
	for range 3 {
		agents = append(agents, executors.New(t, c, executors.Options{}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				c.Restart(c.KillLeader())
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})

	gone := agents[0]
	id := gone.ID()
	stalls := testutil.MeterStalls(t)
	gone.Stop()
	stopped := time.Now()
	testutil.WaitFor(t, timeout+period+2*time.Second, 20*time.Millisecond, func() error {
		m := c.Leader()
		if m == nil {
			return fmt.Errorf("no leader")
		}
		a, ok := m.View().Agent(id)
		if !ok {
			return fmt.Errorf("agent %s unknown", id)
		}
		if a.State != "unreachable" {
			return fmt.Errorf("agent %s is %s %v after it stopped", id, a.State, time.Since(stopped).Round(time.Millisecond))
		}
		return nil
	})
	if took, stalled := time.Since(stopped), stalls.Since(stopped); took > timeout+period+stalled {
		t.Errorf("agent marked unreachable %v after it stopped, want within %v and the %v the process was stalled", took, timeout+period, stalled)
	}
	for _, e := range agents[1:] {
		if a, ok := c.WaitForLeader().View().Agent(e.ID()); !ok || a.State != "active" {
			t.Errorf("heartbeating agent %s: %+v, want active", e.ID(), a)
		}
	}
}
