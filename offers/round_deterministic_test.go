package offers

import (
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestAllocator_Allocate_deterministic replays the same scripted events on
// two allocators per policy and compares every decision.
func TestAllocator_Allocate_deterministic(t *testing.T) {
	for _, p := range Policies() {
		t.Run(string(p), func(t *testing.T) {
			x, y := scriptRun(t, p), scriptRun(t, p)
			if len(x) == 0 {
				t.Fatal("script made no decisions")
			}
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("decisions differ:\n%+v\n%+v", x, y)
			}
		})
	}
}

func scriptRun(t *testing.T, p Policy) []Decisions {
	a := newAlloc(t, testConfig(p))
	must(t, a.SetRole("eng", 2))
	for i, id := range []string{"a1", "a2", "a3", "a4"} {
		addAgent(t, a, id, withPorts(res("cpus", 4000, "mem", 8192, "gpus", int64(i%2)), 31000, 31019),
			protocol.Attributes{"rack": protocol.Text([]string{"r1", "r2"}[i%2])})
	}
	addFw(t, a, "web", "eng/prod")
	addFw(t, a, "batch", "eng/dev")
	addFw(t, a, "ml", "research")
	addFw(t, a, "mesos", "research")
	demand(t, a, "web", Demand{Resources: cpuMem(500, 512), Ports: 1, Count: 10})
	demand(t, a, "batch", Demand{Resources: cpuMem(1000, 256), Count: Unlimited})
	demand(t, a, "ml", Demand{Resources: res("cpus", 1000, "gpus", 1), Count: 3,
		Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r2"}}})
	var out []Decisions
	for i := range 12 {
		now := at(time.Duration(i) * 7 * time.Second)
		d := a.Allocate(now)
		out = append(out, d)
		for j, o := range d.Offers {
			switch (i + j) % 3 {
			case 0:
				r := o.Resources.Clone()
				if r.Scalars[protocol.ResCPUs] >= 1000 {
					r.Scalars[protocol.ResCPUs] /= 2
				}
				_, err := a.Accept(o.FrameworkID, ids(o), []protocol.Resources{r}, now)
				must(t, err)
			case 1:
				must(t, a.Decline(o.FrameworkID, ids(o), DefaultFilter, now))
			}
		}
		if i == 5 {
			rs, err := a.RemoveFramework("web")
			must(t, err)
			out = append(out, Decisions{Rescinds: rs})
		}
		if i == 8 {
			must(t, a.Revive("batch"))
		}
	}
	return out
}
