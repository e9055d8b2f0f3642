package coflow

import (
	"testing"
)

// maxMinSet on 3 ports: A 0→2 1 MB, B 1→2 1 MB, C 1→2 1 MB, D 0→1 3 MB.
// Ingress 2 carries A, B, C; egress 0 carries A and D; egress 1 B and C;
// ingress 1 D alone.
var maxMinSet = []testCoflow{
	{id: "A", flows: []flowMB{{0, 2, 1}}},
	{id: "B", flows: []flowMB{{1, 2, 1}}},
	{id: "C", flows: []flowMB{{1, 2, 1}}},
	{id: "D", flows: []flowMB{{0, 1, 3}}},
}

// Max-min redistributes what a flow bottlenecked at one side cannot use at
// its other side; the equal split does not.
//
// fair (max-min), progressive filling at t=0: shares are ingress 2 1/3,
// egress 0 1/2, egress 1 1/2, ingress 1 1. Ingress 2 is smallest: A, B, C
// freeze at 1/3. Egress 0 has 1 − 1/3 = 2/3 left for D alone, ingress 1
// has 1: D gets 2/3. At t=3 A, B, C have sent 1 MB and end; D has sent 2
// MB and sends its last 1 MB alone at 1: it ends at t=4.
//
// fair-split: D gets min(egress 0's half, ingress 1's whole) = 1/2, and the
// other 1/6 of egress 0 idles. At t=3 D has sent 1.5 MB; the last 1.5 MB
// at 1 end it at t=4.5.
func TestFair_MaxMinRedistributes(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerFair, 3))
	for _, c := range maxMinSet {
		mustRegister(t, co, 0, c)
	}
	d, err := co.Decide(at(0))
	if err != nil {
		t.Fatal(err)
	}
	checkRates(t, Rates(d, 1, co), map[string]float64{"A/0": 1.0 / 3, "B/0": 1.0 / 3, "C/0": 1.0 / 3, "D/0": 2.0 / 3})
	res := runFluid(t, testConfig(SchedulerFair, 3), maxMinSet, fluidOpts{})
	checkCCT(t, res.cct, map[CoflowID]float64{"A": 3, "B": 3, "C": 3, "D": 4})
	split := runFluid(t, testConfig(SchedulerFairSplit, 3), maxMinSet, fluidOpts{})
	checkCCT(t, split.cct, map[CoflowID]float64{"A": 3, "B": 3, "C": 3, "D": 4.5})
}

// Every max-min allocation is feasible and each flow has a saturated
// bottleneck side on which no flow is faster (the definition of max-min
// fairness), on random decisions.
func TestMaxMinRates_Bottlenecks(t *testing.T) {
	for seed := range 200 {
		ports := 2 + seed%5
		var links []Link
		var flows []int
		x := uint64(seed)*0x9e3779b97f4a7c15 + 1
		rnd := func(n int) int {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			return int(x % uint64(n))
		}
		for i := range 1 + rnd(12) {
			links = append(links, Link{Src: Port(rnd(ports)), Dst: Port(rnd(ports))})
			flows = append(flows, i)
		}
		d := &Decision{Ports: ports, FairShare: true, Grants: []Grant{{Coflow: "X", Flows: flows, Links: links}}}
		rates := Rates(d, 1, nil)
		if len(rates) != len(flows) {
			t.Fatalf("seed %d: %d rates for %d flows", seed, len(rates), len(flows))
		}
		load := make([]float64, 2*ports)
		peak := make([]float64, 2*ports)
		for _, r := range rates {
			l := links[r.Flow.Flow]
			for _, s := range []int{int(l.Src), ports + int(l.Dst)} {
				load[s] += r.Rate
				peak[s] = max(peak[s], r.Rate)
			}
		}
		for s, v := range load {
			if v > 1+1e-9 {
				t.Fatalf("seed %d: side %d carries %v > 1", seed, s, v)
			}
		}
		for _, r := range rates {
			l := links[r.Flow.Flow]
			ok := false
			for _, s := range []int{int(l.Src), ports + int(l.Dst)} {
				ok = ok || (load[s] > 1-1e-9 && r.Rate >= peak[s]-1e-9)
			}
			if !ok {
				t.Fatalf("seed %d: flow %d (%v) at %v has no bottleneck side", seed, r.Flow.Flow, l, r.Rate)
			}
		}
	}
}
