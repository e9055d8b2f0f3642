package offers

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestPackByAlignment_MatchesGeneralPacker: on random clusters, the
// efficiency-first round without a work term makes exactly the offers the
// general packer makes. Frameworks draw their optional shapes from a small
// pool, so many share a shape key (what the fast packer groups), some with
// a hard constraint only some agents satisfy (kept apart), and some have
// equal remaining work (ties in SRTF order).
func TestPackByAlignment_MatchesGeneralPacker(t *testing.T) {
	pool := []protocol.Resources{cpuMem(1000, 2048), cpuMem(500, 4096), cpuMem(2000, 1024), cpuMem(1000, 2048)}
	gpu := []protocol.Constraint{{Attribute: "gpu", Op: protocol.OpEq, Value: "a100"}}
	for seed := uint64(1); seed <= 60; seed++ {
		build := func(general bool) []Offer {
			rng := rand.New(rand.NewPCG(seed, 7))
			cfg := DefaultConfig()
			cfg.LeftoverOrder = LeftoverEfficiencyFirst
			a := newAlloc(t, cfg)
			a.leftover.generalPack = general
			for i := range 1 + rng.IntN(6) {
				var attrs protocol.Attributes
				if rng.IntN(3) == 0 {
					attrs = protocol.Attributes{"gpu": protocol.Text("a100")}
				}
				addAgent(t, a, fmt.Sprintf("m%d", i), cpuMem(int64(4000+1000*rng.IntN(12)), int64(8192+1024*rng.IntN(24))), attrs)
			}
			for i := range 2 + rng.IntN(8) {
				id := fmt.Sprintf("F%d", i)
				addFw(t, a, id, fmt.Sprintf("r%d", rng.IntN(3)))
				var opt []Demand
				for range 1 + rng.IntN(3) {
					d := Demand{Resources: pool[rng.IntN(len(pool))], Count: int64(1 + rng.IntN(20))}
					if rng.IntN(4) == 0 {
						d.Constraints = gpu
					}
					opt = append(opt, d)
				}
				decl := Declaration{Optional: opt, RemainingWork: float64(1 + rng.IntN(4))}
				if rng.IntN(3) == 0 {
					decl.Demand = []Demand{{Resources: pool[rng.IntN(len(pool))], Count: int64(1 + rng.IntN(4))}}
				}
				declare(t, a, id, decl)
			}
			return a.Allocate(t0).Offers
		}
		fast, general := build(false), build(true)
		if !reflect.DeepEqual(summaries(fast), summaries(general)) {
			t.Fatalf("seed %d: by alignment %v, general packer %v", seed, summaries(fast), summaries(general))
		}
		if len(fast) == 0 {
			t.Fatalf("seed %d: no offers", seed)
		}
	}
}

func summaries(os []Offer) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = fmt.Sprintf("%s@%s %s %s x%d", o.FrameworkID, o.AgentID, o.Kind, o.Resources, o.Tasks)
	}
	return out
}
