package integration

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_AgentRemovalLimit: with a removal limit of half the agents,
// one of four agents going silent is marked unreachable; the other three
// going silent together are not (three of three tracked is beyond the
// limit), and the master says it holds them.
func TestCluster_AgentRemovalLimit(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	c := testcluster.New(t, testcluster.Options{Masters: 1, Agents: 4, AgentTimeout: timeout,
		Configure: func(_ int, cfg *master.Config) { cfg.AgentRemovalLimit = 0.5 }})
	leader := c.WaitForLeader()
	agents := c.Agents()
	stateOf := func(id protocol.AgentID) state.AgentState {
		a, _ := c.WaitForLeader().View().Agent(id)
		if a == nil {
			return ""
		}
		return a.State
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for _, a := range agents {
			if st := stateOf(a.ID()); st != state.AgentActive {
				return fmt.Errorf("agent %s is %q", a.ID(), st)
			}
		}
		return nil
	})

	agents[0].Close()
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if st := stateOf(agents[0].ID()); st != state.AgentUnreachable {
			return fmt.Errorf("agent %s is %q, want unreachable", agents[0].ID(), st)
		}
		return nil
	})

	// Together: one after the other, a slow machine can take a timeout to
	// close them, and the first would then be late alone.
	var closing sync.WaitGroup
	for _, a := range agents[1:] {
		closing.Go(a.Close)
	}
	closing.Wait()
	held := func() error {
		resp, err := http.Get("http://" + leader.HTTPAddr() + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if !strings.Contains(string(body), "\nallot_agent_removals_held 1\n") {
			return errors.New("removals not held yet")
		}
		return nil
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, held)
	// Held for good: several more timeouts pass and none is marked.
	var marked error
	if err := testutil.Poll(3*timeout, 20*time.Millisecond, func() error {
		for _, a := range agents[1:] {
			if st := stateOf(a.ID()); st != state.AgentActive {
				marked = fmt.Errorf("agent %s became %q though three of three agents went silent at once", a.ID(), st)
				return nil
			}
		}
		return errors.New("all three still active")
	}); err == nil {
		t.Fatal(marked)
	}
	if err := held(); err != nil {
		t.Fatal(err)
	}
}
