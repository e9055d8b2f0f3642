package offers

import (
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// A framework whose turn comes first would take every idle 8-GPU agent
// for single-GPU tasks; while an 8-GPU task is pending, one idle agent is
// kept for it, and the single-GPU tasks get the other.
func TestReserve_keepsIdleAgentForLargeTask(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.Placement = PlacementFirstFit
	a := newAlloc(t, cfg)
	addAgent(t, a, "g0", gpuAgent(8), nil)
	addAgent(t, a, "g1", gpuAgent(8), nil)
	addAgent(t, a, "cpu", cpuMem(256000, 1000000), nil)
	addFw(t, a, "small", "s")
	addFw(t, a, "big", "b")
	// big already runs more than half the CPUs, so small's share stays
	// lower through both GPU agents and its turn comes first.
	must(t, a.AddUsage("big", "cpu", cpuMem(200000, 1000)))
	demand(t, a, "small", Demand{Resources: gpuTask(1000), Count: 16})
	demand(t, a, "big", Demand{Resources: gpuTask(8000), Count: 1})
	d := a.Allocate(time.Unix(100, 0))
	var bigOffers, smallAgents int
	seen := map[protocol.AgentID]bool{}
	for _, o := range d.Offers {
		switch o.FrameworkID {
		case "big":
			if o.Tasks > 0 {
				bigOffers++
			}
		case "small":
			if !seen[o.AgentID] {
				seen[o.AgentID] = true
				smallAgents++
			}
		}
	}
	if bigOffers != 1 || smallAgents != 1 {
		t.Errorf("with an 8-GPU task pending: %d offers for it, small offered on %d agents; want 1 and 1", bigOffers, smallAgents)
	}
}

// At most half of the idle agents are kept, so smaller work has room even
// when many large tasks wait.
func TestReserve_keepsAtMostHalf(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.Placement = PlacementFirstFit
	a := newAlloc(t, cfg)
	for _, id := range []string{"g0", "g1", "g2", "g3"} {
		addAgent(t, a, id, gpuAgent(8), nil)
	}
	addFw(t, a, "big", "b")
	demand(t, a, "big", Demand{Resources: gpuTask(8000), Count: 10})
	order := func(i int) *agent { return a.agentList[i] }
	kept := a.reserveLarge(order, len(a.agentList))
	n := 0
	for _, k := range kept {
		if k {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d of 4 idle agents kept for 10 large tasks, want 2", n)
	}
}
