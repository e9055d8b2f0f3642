package offers

import (
	"fmt"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestAllocator_WideTies: among ten siblings (a node wide enough to keep
// its children sorted, sortedFanout), the first task's worth of a free
// agent goes to the earliest created of the children whose keys tie:
// exactly, or within the tie tolerance, as the narrow scan decides.
//
// The near tie: f0..f8 (weight 0.3) run 300 milli-CPUs each and f9 (weight
// 0.1) runs 100, of 3,900 in the cluster; 300/3900/0.3 and 100/3900/0.1
// are equal but come out one rounding apart, f9's below. Sorted, f9 comes
// first; f0 was created earlier and ties with it, so f0 is offered first.
//
// Mutants this catches (offers/order.go pickSorted): the near-tie check
// skipped (f9 is offered first); exact ties not ordered by creation in
// the sorted list (with no near tie, another than f0 is).
func TestAllocator_WideTies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lastW    float64
		lastUsed int64
	}{
		{"near tie", 0.1, 100},
		{"exact ties", 0.3, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAlloc(t, DefaultConfig())
			must(t, a.SetRole("r", 1))
			used := int64(0)
			for i := range 10 {
				w, u := 0.3, int64(300)
				if i == 9 {
					w, u = tc.lastW, tc.lastUsed
				}
				id, ag := fmt.Sprintf("f%d", i), fmt.Sprintf("a%d", i)
				must(t, a.AddFramework(FrameworkInfo{ID: protocol.FrameworkID(id), Role: "r", Weight: w}))
				addAgent(t, a, ag, cpus(u), nil)
				must(t, a.AddUsage(protocol.FrameworkID(id), protocol.AgentID(ag), cpus(u)))
				demand(t, a, id, Demand{Resources: cpus(100), Count: 1})
				used += u
			}
			addAgent(t, a, "free", cpus(3900-used), nil)
			offers := a.Allocate(t0).Offers
			if len(offers) == 0 || offers[0].FrameworkID != "f0" {
				var got []string
				for _, o := range offers {
					got = append(got, fmt.Sprintf("%s on %s", o.FrameworkID, o.AgentID))
				}
				t.Fatalf("offers %v, want f0's first", got)
			}
		})
	}
}
