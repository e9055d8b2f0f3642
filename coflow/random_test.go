package coflow

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSchedulers_RandomSets runs every scheduler (and every philae policy,
// with and without work conservation) over random coflow sets. runFluid
// checks on every decision that no port side is granted beyond capacity,
// that no finished flow gets a rate and that something always makes
// progress; here every coflow must also finish.
func TestSchedulers_RandomSets(t *testing.T) {
	type variant struct {
		name string
		mod  func(*Config)
	}
	var variants []variant
	for _, s := range Schedulers() {
		variants = append(variants, variant{string(s), func(c *Config) { c.Scheduler = s }})
	}
	for _, p := range []Policy{PolicyA, PolicyB, PolicyC, PolicyD} {
		variants = append(variants, variant{"philae-" + string(p) + "-nowc", func(c *Config) {
			c.Policy, c.WorkConserving = p, false
		}})
	}
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		set := randomSet(rng, 6, 5)
		for _, v := range variants {
			t.Run(fmt.Sprintf("seed%d/%s", seed, v.name), func(t *testing.T) {
				cfg := testConfig(SchedulerPhilae, 6)
				cfg.ThinLimit, cfg.FirstQueueLimit, cfg.QueueGrowth = 2, 2*mb, 2
				cfg.SlotsPerRound, cfg.WeightRatio, cfg.Slot = 4, 2, time.Second
				v.mod(&cfg)
				res := runFluid(t, cfg, set, fluidOpts{reportEvery: 0.5, reportEachDecision: cfg.Scheduler == SchedulerSEBF})
				if len(res.cct) != len(set) {
					t.Fatalf("%d of %d coflows finished", len(res.cct), len(set))
				}
			})
		}
	}
}

// randomSet draws n coflows on ports 0..ports-1: 1–3 senders × 1–3
// receivers, 1–6 MB per flow, arrivals in the first 10 s.
func randomSet(rng *rand.Rand, ports, n int) []testCoflow {
	var set []testCoflow
	for i := range n {
		c := testCoflow{id: CoflowID(fmt.Sprint("c", i)), arrival: float64(rng.IntN(10))}
		perm := rng.Perm(ports)
		m, r := 1+rng.IntN(3), 1+rng.IntN(3)
		for _, s := range perm[:m] {
			for _, d := range rng.Perm(ports)[:r] {
				c.flows = append(c.flows, flowMB{Port(s), Port(d), float64(1 + rng.IntN(6))})
			}
		}
		set = append(set, c)
	}
	return set
}
