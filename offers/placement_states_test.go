package offers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// packOrderReference is packOrder as its comment states it, agent by
// agent with no cache: every agent scored for every pending shape, the
// best `units` picked one at a time, the rest in agentList's order.
func packOrderReference(a *Allocator) []protocol.AgentID {
	a.refreshWeights()
	var pending []*shape
	units := int64(0)
	for _, f := range a.fwByIdx {
		if f == nil || !f.demanding() {
			continue
		}
		for _, s := range f.shapes {
			if n := s.pending(); n > 0 {
				pending = append(pending, s)
				units = min(units+min(n, int64(len(a.agentList))), int64(len(a.agentList)))
			}
		}
	}
	var out []protocol.AgentID
	if len(pending) == 0 {
		for _, ag := range a.agentList {
			out = append(out, ag.id)
		}
		return out
	}
	scores := make([]packScore, len(a.agentList))
	for i, ag := range a.agentList {
		best := packScore{delta: math.Inf(1), tight: math.Inf(1)}
		if !ag.draining {
			for _, s := range pending {
				sc := a.scoreOn(ag, s)
				if sc.ok && (sc.delta < best.delta || sc.delta == best.delta && sc.tight < best.tight) {
					best = sc
				}
			}
		}
		scores[i] = best
	}
	taken := make([]bool, len(a.agentList))
	for range units {
		best := -1
		for i := range scores {
			if !taken[i] && (best < 0 || packLess(&scores[i], &scores[best], i, best)) {
				best = i
			}
		}
		if best < 0 || math.IsInf(scores[best].delta, 1) {
			break
		}
		taken[best] = true
		out = append(out, a.agentList[best].id)
	}
	for i, ag := range a.agentList {
		if !taken[i] {
			out = append(out, ag.id)
		}
	}
	return out
}

// TestPackOrder_matchesReference drives random GPU clusters through
// launches, ends, drains, agents joining and leaving and changing demand,
// and compares packOrder, which scores agent states once and shares the
// scores, with the reference that scores every agent afresh.
func TestPackOrder_matchesReference(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 9))
		cfg := testConfig(PolicyDynamic)
		cfg.Placement = PlacementPack
		a := newAlloc(t, cfg)
		models := []string{"A", "B"}
		next := 0
		addGPU := func() {
			n := []int{0, 1, 2, 4, 8}[r.IntN(5)]
			total := gpuAgent(n)
			total.Scalars[protocol.ResCPUs] = int64(8+r.IntN(4)*8) * 1000
			total.Scalars[protocol.ResMem] = int64(16+r.IntN(4)*16) * 1024
			addAgent(t, a, fmt.Sprintf("a%02d", next), total, protocol.Attributes{"gpu_model": protocol.ParseValue(models[r.IntN(2)])})
			next++
		}
		for range 12 + r.IntN(12) {
			addGPU()
		}
		addFw(t, a, "f", "r")
		type held struct {
			agent protocol.AgentID
			res   protocol.Resources
		}
		var running []held
		now := time.Unix(1000, 0)
		for step := range 120 {
			now = now.Add(time.Second)
			switch k := r.IntN(10); {
			case k < 6:
				// A task arrives: place it as the benchmark does.
				var task protocol.Resources
				switch r.IntN(4) {
				case 0:
					task = cpuMem(int64(1+r.IntN(4))*1000, 2048)
				case 1:
					task = gpuTask(int64(100 * (1 + r.IntN(9))))
				default:
					task = gpuTask(int64(1000 * []int{1, 1, 2, 4, 8}[r.IntN(5)]))
				}
				d := Demand{Resources: task, Count: []int64{1, 1, 1, 2, 3}[r.IntN(5)]}
				if r.IntN(4) == 0 {
					d.Constraints = []protocol.Constraint{{Attribute: "gpu_model", Op: protocol.OpIn, Values: []string{models[r.IntN(2)]}}}
				}
				demand(t, a, "f", d)
				want := packOrderReference(a)
				var got []protocol.AgentID
				for _, ag := range a.packOrder() {
					got = append(got, ag.id)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d step %d: packOrder %v, reference %v", seed, step, got, want)
				}
				dec := a.Allocate(now)
				for _, o := range dec.Offers {
					acc, err := a.AcceptTasks("f", []protocol.OfferID{o.ID}, []protocol.Resources{task}, now)
					if err == nil {
						running = append(running, held{acc.Agent, acc.Tasks[0]})
						break
					}
				}
				for _, o := range dec.Offers {
					_ = a.Decline("f", []protocol.OfferID{o.ID}, 0, now)
				}
				demand(t, a, "f")
			case k < 8 && len(running) > 0:
				i := r.IntN(len(running))
				must(t, a.Recover("f", running[i].agent, running[i].res))
				running = slices.Delete(running, i, i+1)
			case k == 8:
				id := a.agentList[r.IntN(len(a.agentList))].id
				_, err := a.SetDraining(id, !a.Draining(id))
				must(t, err)
			default:
				if r.IntN(2) == 0 || len(a.agentList) < 4 {
					addGPU()
					continue
				}
				id := a.agentList[r.IntN(len(a.agentList))].id
				_, err := a.RemoveAgent(id)
				must(t, err)
				running = slices.DeleteFunc(running, func(h held) bool { return h.agent == id })
			}
		}
	}
}
