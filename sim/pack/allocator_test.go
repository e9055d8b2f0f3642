package pack

import (
	"testing"

	"github.com/allot-project/allot/offers"
)

// The production allocator, driven as the leader drives it, places a
// slice of the openb trace on a slice of its nodes under every placement
// without a placement the harness's own device-level state refuses (an
// overcommit fails the run), and packing allocates more than spreading.
func TestPack_AllocatorPlacements(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes("gpu")
	if err != nil {
		t.Fatal(err)
	}
	trace, err := LoadPods("gpuspec33")
	if err != nil {
		t.Fatal(err)
	}
	// Every tenth node and the first 800 pods: all models, constraints
	// included.
	var some []Node
	for i := 0; i < len(nodes); i += 10 {
		some = append(some, nodes[i])
	}
	policies := []Policy{Allocator(offers.PlacementSpread), Allocator(offers.PlacementFirstFit), Allocator(offers.PlacementPack)}
	rep, err := RunFill(FillConfig{Nodes: some, Trace: trace[:800], Seeds: []uint64{1, 2}}, policies)
	if err != nil {
		t.Fatal(err)
	}
	alloc := map[string]float64{}
	for _, r := range rep.Policies {
		alloc[r.Policy] = r.AllocAt100
		if r.AllocAt100 <= 0.5 {
			t.Errorf("%s allocated %.1f%% at 100%% arrived", r.Policy, 100*r.AllocAt100)
		}
	}
	if alloc["allot-pack"] <= alloc["allot-spread"] {
		t.Errorf("pack allocated %.2f%%, spread %.2f%%: packing should allocate more", 100*alloc["allot-pack"], 100*alloc["allot-spread"])
	}
	t.Logf("allocated at 100%% arrived: %v", alloc)
}
