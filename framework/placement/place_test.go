package placement_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// agentOffer is one offer of cpus milli-CPUs and 1 GiB on an agent.
func agentOffer(agent string, cpus int64, kv ...string) protocol.Offer {
	return protocol.Offer{ID: protocol.OfferID("of-" + agent), AgentID: protocol.AgentID(agent),
		Resources: res(cpus, 1024), Attributes: attrs(kv...)}
}

func cpuTasks(n int, cpus int64) []protocol.TaskInfo {
	out := make([]protocol.TaskInfo, n)
	for i := range out {
		out[i] = framework.NewTask(protocol.TaskID(fmt.Sprint("t", i)), "x").CPUs(cpus).Mem(64).Build()
	}
	return out
}

var (
	uniqueRack = protocol.Constraint{Attribute: "rack", Op: protocol.OpUnique}
	sameRack   = protocol.Constraint{Attribute: "rack", Op: protocol.OpSame}
)

func maxPerRack(n int) protocol.Constraint {
	return protocol.Constraint{Attribute: "rack", Op: protocol.OpMaxPer, N: n}
}

// checkPlacement verifies a placement against its spec and offers.
func checkPlacement(t *testing.T, offers []protocol.Offer, spec placement.Spec, p placement.Plan) {
	t.Helper()
	byAgent := map[protocol.AgentID]protocol.Resources{}
	attrsOf := map[protocol.AgentID]protocol.Attributes{}
	for _, o := range offers {
		r := byAgent[o.AgentID]
		r.AddInPlace(o.Resources)
		byAgent[o.AgentID] = r
		attrsOf[o.AgentID] = o.Attributes
	}
	if len(p.Tasks) != len(spec.Tasks) {
		t.Fatalf("placed %d tasks, want %d", len(p.Tasks), len(spec.Tasks))
	}
	var placements []protocol.Attributes
	used := map[protocol.AgentID]protocol.Resources{}
	for i, ti := range p.Tasks {
		if ti.TaskID != spec.Tasks[i].TaskID {
			t.Fatalf("task %d is %s, want %s", i, ti.TaskID, spec.Tasks[i].TaskID)
		}
		if ok, why := protocol.MatchHard(append(slices.Clone(ti.Constraints), spec.Constraints...), attrsOf[ti.AgentID]); !ok {
			t.Fatalf("task %s on %s: %s", ti.TaskID, ti.AgentID, why)
		}
		if n := ti.Resources.Ranges[protocol.ResPorts].Count(); n != uint64(spec.Ports) {
			t.Fatalf("task %s got %d ports, want %d", ti.TaskID, n, spec.Ports)
		}
		u := used[ti.AgentID]
		if overlap(u, ti.Resources) {
			t.Fatalf("task %s shares ports on %s", ti.TaskID, ti.AgentID)
		}
		u.AddInPlace(ti.Resources)
		used[ti.AgentID] = u
		placements = append(placements, attrsOf[ti.AgentID])
	}
	for ag, u := range used {
		if !byAgent[ag].Contains(u) {
			t.Fatalf("agent %s: tasks use %s, offers hold %s", ag, u, byAgent[ag])
		}
	}
	if err := placement.CheckGroup(spec.Constraints, placements); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ap := range p.Agents {
		n += len(ap.Tasks)
		for _, ti := range ap.Tasks {
			if ti.AgentID != ap.AgentID {
				t.Fatalf("task %s listed under %s, placed on %s", ti.TaskID, ap.AgentID, ti.AgentID)
			}
		}
		for _, o := range offers {
			if o.AgentID == ap.AgentID && !slices.Contains(ap.OfferIDs, o.ID) {
				t.Fatalf("offer %s of %s not in its accept", o.ID, ap.AgentID)
			}
		}
	}
	if n != len(spec.Tasks) {
		t.Fatalf("agents list %d tasks, want %d", n, len(spec.Tasks))
	}
}

func overlap(a, b protocol.Resources) bool {
	pa, pb := a.Ranges[protocol.ResPorts], b.Ranges[protocol.ResPorts]
	return len(pa.Minus(pa.Minus(pb))) > 0
}

func TestPlace(t *testing.T) {
	racks3 := []protocol.Offer{
		agentOffer("a1", 4000, "rack", "r1"), agentOffer("a2", 4000, "rack", "r2"), agentOffer("a3", 4000, "rack", "r3"),
	}
	tests := []struct {
		name   string
		offers []protocol.Offer
		spec   placement.Spec
		ok     bool
		agents int // agents used, when ok (0: not checked)
	}{
		{"unique over distinct racks", racks3,
			placement.Spec{Tasks: cpuTasks(3, 1000), Constraints: []protocol.Constraint{uniqueRack}}, true, 3},
		{"unique with more tasks than racks", racks3,
			placement.Spec{Tasks: cpuTasks(4, 1000), Constraints: []protocol.Constraint{uniqueRack}}, false, 0},
		{"unique with shared racks", []protocol.Offer{
			agentOffer("a1", 4000, "rack", "r1"), agentOffer("a2", 4000, "rack", "r1"),
			agentOffer("a3", 4000, "rack", "r2"), agentOffer("a4", 4000, "rack", "r2"), agentOffer("a5", 4000, "rack", "r3"),
		}, placement.Spec{Tasks: cpuTasks(3, 1000), Constraints: []protocol.Constraint{uniqueRack}}, true, 3},
		{"unique skips agents without the attribute", []protocol.Offer{
			agentOffer("a1", 4000, "rack", "r1"), agentOffer("a2", 4000), agentOffer("a3", 4000, "rack", "r2"),
		}, placement.Spec{Tasks: cpuTasks(3, 1000), Constraints: []protocol.Constraint{uniqueRack}}, false, 0},
		{"same picks the rack that holds them all", []protocol.Offer{
			agentOffer("a1", 1000, "rack", "r1"), agentOffer("a2", 1000, "rack", "r1"), agentOffer("a3", 1000, "rack", "r1"),
			agentOffer("b1", 4000, "rack", "r2"),
		}, placement.Spec{Tasks: cpuTasks(3, 2000), Constraints: []protocol.Constraint{sameRack}}, false, 0},
		{"same over several agents of one rack", []protocol.Offer{
			agentOffer("a1", 1000, "rack", "r1"), agentOffer("b1", 2000, "rack", "r2"), agentOffer("b2", 2000, "rack", "r2"),
			agentOffer("c1", 1000, "rack", "r3"),
		}, placement.Spec{Tasks: cpuTasks(4, 1000), Constraints: []protocol.Constraint{sameRack}}, true, 2},
		{"max_per spreads", racks3,
			placement.Spec{Tasks: cpuTasks(6, 1000), Constraints: []protocol.Constraint{maxPerRack(2)}}, true, 3},
		{"max_per too tight", racks3,
			placement.Spec{Tasks: cpuTasks(7, 1000), Constraints: []protocol.Constraint{maxPerRack(2)}}, false, 0},
		{"packing without group constraints", racks3[:1],
			placement.Spec{Tasks: cpuTasks(4, 1000)}, true, 1},
		{"beyond capacity", racks3[:1], placement.Spec{Tasks: cpuTasks(5, 1000)}, false, 0},
		{"per-task constraint forces the order", []protocol.Offer{
			agentOffer("a1", 4000, "rack", "r1", "gpu", "a100"), agentOffer("a2", 4000, "rack", "r2"),
		}, placement.Spec{Tasks: append(cpuTasks(1, 1000),
			framework.NewTask("gpu", "x").CPUs(1000).Constraint(protocol.Constraint{Attribute: "gpu", Op: protocol.OpExists}).Build()),
			Constraints: []protocol.Constraint{uniqueRack}}, true, 2},
		{"constraint for every task", racks3, placement.Spec{Tasks: cpuTasks(2, 1000),
			Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpIn, Values: []string{"r2", "r3"}}, uniqueRack}}, true, 2},
		{"ports", []protocol.Offer{{ID: "o1", AgentID: "a1", Resources: res(4000, 1024, protocol.Range{Begin: 100, End: 103})}},
			placement.Spec{Tasks: cpuTasks(2, 1000), Ports: 2}, true, 1},
		{"ports run out", []protocol.Offer{{ID: "o1", AgentID: "a1", Resources: res(4000, 1024, protocol.Range{Begin: 100, End: 102})}},
			placement.Spec{Tasks: cpuTasks(2, 1000), Ports: 2}, false, 0},
		{"offers of one agent add up", []protocol.Offer{
			{ID: "o1", AgentID: "a1", Resources: res(1000, 512)}, {ID: "o2", AgentID: "a1", Resources: res(1000, 512)},
		}, placement.Spec{Tasks: cpuTasks(1, 2000)}, true, 1},
		{"nothing to place", nil, placement.Spec{}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := placement.Place(tt.offers, tt.spec)
			if ok != tt.ok {
				t.Fatalf("Place = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			checkPlacement(t, tt.offers, tt.spec, p)
			if tt.agents > 0 && len(p.Agents) != tt.agents {
				t.Fatalf("placement uses %d agents, want %d: %+v", len(p.Agents), tt.agents, p.Agents)
			}
		})
	}
}

// TestPlace_FindsEveryPlacement compares Place with an exhaustive search
// on small random instances: it must find a placement whenever one exists.
func TestPlace_FindsEveryPlacement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	groups := [][]protocol.Constraint{
		nil, {uniqueRack}, {sameRack}, {maxPerRack(1)}, {maxPerRack(2)},
		{uniqueRack, {Attribute: "zone", Op: protocol.OpSame}},
	}
	for i := range 400 {
		var offers []protocol.Offer
		for a := range 1 + rng.IntN(4) {
			kv := []string{"zone", fmt.Sprint("z", rng.IntN(2))}
			if rng.IntN(5) > 0 {
				kv = append(kv, "rack", fmt.Sprint("r", rng.IntN(3)))
			}
			offers = append(offers, agentOffer(fmt.Sprint("a", a), int64(1+rng.IntN(3))*1000, kv...))
		}
		var tasks []protocol.TaskInfo
		for k := range 1 + rng.IntN(4) {
			b := framework.NewTask(protocol.TaskID(fmt.Sprint("t", k)), "x").CPUs(int64(1+rng.IntN(2)) * 1000)
			if rng.IntN(4) == 0 {
				b.Constraint(protocol.Constraint{Attribute: "zone", Op: protocol.OpEq, Value: "z0"})
			}
			tasks = append(tasks, b.Build())
		}
		spec := placement.Spec{Tasks: tasks, Constraints: groups[rng.IntN(len(groups))]}
		want := bruteForce(offers, spec)
		p, got := placement.Place(offers, spec)
		if got != want {
			t.Fatalf("instance %d: Place = %v, exhaustive search = %v\noffers %+v\nspec %+v", i, got, want, offers, spec)
		}
		if got {
			checkPlacement(t, offers, spec, p)
		}
	}
}

// bruteForce tries every assignment of tasks to agents.
func bruteForce(offers []protocol.Offer, spec placement.Spec) bool {
	n, m := len(spec.Tasks), len(offers)
	assign := make([]int, n)
	var try func(k int) bool
	try = func(k int) bool {
		if k == n {
			used := make([]protocol.Resources, m)
			var placed []protocol.Attributes
			for i, j := range assign {
				used[j].AddInPlace(spec.Tasks[i].Resources)
				if ok, _ := protocol.MatchHard(append(slices.Clone(spec.Tasks[i].Constraints), spec.Constraints...),
					offers[j].Attributes); !ok {
					return false
				}
				placed = append(placed, offers[j].Attributes)
			}
			for j := range used {
				if !offers[j].Resources.Contains(used[j]) {
					return false
				}
			}
			return protocol.CheckGroup(spec.Constraints, placed) == nil
		}
		for j := range m {
			assign[k] = j
			if try(k + 1) {
				return true
			}
		}
		return false
	}
	return try(0)
}
