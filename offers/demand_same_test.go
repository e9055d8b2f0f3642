package offers

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Re-declaring the same entries with other counts keeps the shapes (the
// shortcut), and every decision is what building them in full gives.
func TestSetDemand_countsOnlyKeepsShapes(t *testing.T) {
	rack := []protocol.Constraint{{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r1", "r2"}}}
	entries := func(n1, n2 int64) []Demand {
		return []Demand{
			{Resources: cpuMem(500, 512), Count: n1},
			{Resources: cpuMem(1000, 1024), Count: n2, Constraints: rack},
		}
	}
	run := func(full bool) ([]string, *Allocator) {
		a := newAlloc(t, testConfig(PolicyDynamic))
		a.fullDemand = full
		for i := range 4 {
			attrs := protocol.Attributes{"rack": protocol.Text(fmt.Sprint("r", i%3))}
			addAgent(t, a, fmt.Sprint("a", i), cpuMem(2000, 2048), attrs)
		}
		addFw(t, a, "f", "r")
		var trace []string
		now := time.Unix(100, 0)
		for step, counts := range [][2]int64{{3, 1}, {5, 2}, {1, 0}, {0, 4}, {2, 2}} {
			demand(t, a, "f", entries(counts[0], counts[1])...)
			d := a.Allocate(now)
			for _, o := range d.Offers {
				trace = append(trace, fmt.Sprintf("%d %s %s %d", step, o.AgentID, o.Resources, o.Tasks))
			}
			// Accept the first offer's units, decline the rest.
			for k, o := range d.Offers {
				if k == 0 && o.Tasks > 0 {
					tasks := make([]protocol.Resources, o.Tasks)
					for j := range tasks {
						tasks[j] = cpuMem(500, 512)
					}
					if _, err := a.AcceptTasks("f", []protocol.OfferID{o.ID}, tasks, now); err == nil {
						continue
					}
				}
				must(t, a.Decline("f", []protocol.OfferID{o.ID}, 0, now))
			}
			now = now.Add(time.Second)
		}
		return trace, a
	}
	short, a := run(false)
	full, _ := run(true)
	if fmt.Sprint(short) != fmt.Sprint(full) {
		t.Fatalf("decisions differ:\n shortcut %v\n full     %v", short, full)
	}
	if len(short) == 0 {
		t.Fatal("no offers at all")
	}
	f := a.frameworks["f"]
	before := f.shapes[1]
	demand(t, a, "f", entries(7, 3)...)
	if f.shapes[1] != before || f.shapes[1].count != 3 {
		t.Fatalf("a counts-only re-declaration rebuilt the shapes")
	}
	changed := entries(7, 3)
	changed[1].Constraints = []protocol.Constraint{{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r1"}}}
	demand(t, a, "f", changed...)
	if f.shapes[1] == before {
		t.Fatalf("a re-declaration with other constraints kept the old shape")
	}
}
