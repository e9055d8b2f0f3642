package offers

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// fwSpec describes a framework in a table: Demand nil means undeclared.
type fwSpec struct {
	ID         string
	Role       string
	Suppressed bool
	Demand     []Demand
}

// setup builds an allocator with the given agents and frameworks.
func setup(t testing.TB, cfg Config, agents []AgentInfo, fws []fwSpec) *Allocator {
	t.Helper()
	a := newAlloc(t, cfg)
	for _, ag := range agents {
		must(t, a.AddAgent(ag))
	}
	for _, f := range fws {
		must(t, a.AddFramework(FrameworkInfo{ID: protocol.FrameworkID(f.ID), Role: f.Role, Suppressed: f.Suppressed}))
		if f.Demand != nil {
			demand(t, a, f.ID, f.Demand...)
		}
	}
	return a
}

func agentInfo(id string, total protocol.Resources, attrs protocol.Attributes) AgentInfo {
	return AgentInfo{ID: protocol.AgentID(id), Hostname: id + ".test", Total: total, Attributes: attrs}
}

func TestAllocator_Allocate_oneOfferPerFrameworkPerAgent(t *testing.T) {
	small := cpuMem(500, 256)
	unit := cpuMem(1000, 1024)
	tests := []struct {
		name   string
		agents []AgentInfo
		fws    []fwSpec
		want   []offerKey
	}{
		{
			name:   "many small tasks make one offer",
			agents: []AgentInfo{agentInfo("a1", cpuMem(4000, 4096), nil)},
			fws:    []fwSpec{{ID: "f1", Demand: []Demand{{Resources: small, Count: 6}}}},
			want:   []offerKey{{"f1", "a1", "cpus:3000;mem:1536", 6}},
		},
		{
			name:   "units capped by the agent",
			agents: []AgentInfo{agentInfo("a1", cpuMem(4000, 4096), nil)},
			fws:    []fwSpec{{ID: "f1", Demand: []Demand{{Resources: small, Count: 20}}}},
			want:   []offerKey{{"f1", "a1", "cpus:4000;mem:2048", 8}},
		},
		{
			name:   "one offer on each agent",
			agents: []AgentInfo{agentInfo("a1", cpuMem(2000, 2048), nil), agentInfo("a2", cpuMem(2000, 2048), nil)},
			fws:    []fwSpec{{ID: "f1", Demand: []Demand{{Resources: small, Count: 6}}}},
			want:   []offerKey{{"f1", "a1", "cpus:2000;mem:1024", 4}, {"f1", "a2", "cpus:1000;mem:512", 2}},
		},
		{
			name:   "two frameworks alternate on one agent",
			agents: []AgentInfo{agentInfo("a1", cpuMem(4000, 4096), nil)},
			fws: []fwSpec{
				{ID: "f1", Demand: []Demand{{Resources: unit, Count: Unlimited}}},
				{ID: "f2", Demand: []Demand{{Resources: unit, Count: Unlimited}}},
			},
			want: []offerKey{{"f1", "a1", "cpus:2000;mem:2048", 2}, {"f2", "a1", "cpus:2000;mem:2048", 2}},
		},
		{
			name:   "two shapes in one offer",
			agents: []AgentInfo{agentInfo("a1", cpuMem(4000, 4096), nil)},
			fws:    []fwSpec{{ID: "f1", Demand: []Demand{{Resources: unit, Count: 1}, {Resources: cpuMem(500, 512), Count: 2}}}},
			want:   []offerKey{{"f1", "a1", "cpus:2000;mem:2048", 3}},
		},
	}
	for _, tc := range tests {
		for _, p := range Policies() {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				a := setup(t, testConfig(p), tc.agents, tc.fws)
				d := a.Allocate(t0)
				if got := sortedKeys(d.Offers); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("offers: got %v, want %v", got, tc.want)
				}
				if err := checkInvariants(a); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestAllocator_Allocate_remainder(t *testing.T) {
	unit := cpuMem(1000, 1024)
	ag := []AgentInfo{agentInfo("a1", withPorts(cpuMem(4000, 4096), 31000, 31009), nil)}
	tests := []struct {
		name   string
		min    map[string]int64 // nil keeps the default
		agents []AgentInfo
		fws    []fwSpec
		want   []offerKey
	}{
		{
			name:   "whole remainder with ports after declared demand",
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: unit, Ports: 2, Count: 1}}}},
			want: []offerKey{
				{"f0", "a1", "cpus:3000;mem:3072;ports:[31002-31009]", 0},
				{"f1", "a1", "cpus:1000;mem:1024;ports:[31000-31001]", 1},
			},
		},
		{
			name:   "remainder below MinAllocatable",
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: cpuMem(3995, 4065), Count: 1}}}},
			want:   []offerKey{{"f1", "a1", "cpus:3995;mem:4065", 1}},
		},
		{
			name:   "remainder exactly MinAllocatable memory",
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: cpuMem(4000, 4064), Count: 1}}}},
			want: []offerKey{
				{"f0", "a1", "mem:32;ports:[31000-31009]", 0},
				{"f1", "a1", "cpus:4000;mem:4064", 1},
			},
		},
		{
			name:   "remainder with only ports is not offered",
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: cpuMem(4000, 4096), Count: 1}}}},
			want:   []offerKey{{"f1", "a1", "cpus:4000;mem:4096", 1}},
		},
		{
			name:   "custom MinAllocatable",
			min:    map[string]int64{protocol.ResCPUs: 2000},
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: cpuMem(2001, 1), Count: 1}}}},
			want:   []offerKey{{"f1", "a1", "cpus:2001;mem:1", 1}},
		},
		{
			name:   "empty MinAllocatable offers any scalar remainder",
			min:    map[string]int64{},
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: cpuMem(3999, 4096), Count: 1}}}},
			want: []offerKey{
				{"f0", "a1", "cpus:1;ports:[31000-31009]", 0},
				{"f1", "a1", "cpus:3999;mem:4096", 1},
			},
		},
		{
			name:   "one undeclared framework per agent",
			agents: []AgentInfo{agentInfo("a1", cpuMem(2000, 2048), nil), agentInfo("a2", cpuMem(2000, 2048), nil)},
			fws:    []fwSpec{{ID: "f0"}, {ID: "f2"}},
			want:   []offerKey{{"f0", "a1", "cpus:2000;mem:2048", 0}, {"f2", "a2", "cpus:2000;mem:2048", 0}},
		},
		{
			name:   "declared demand that fits nowhere leaves the whole agent",
			agents: ag,
			fws:    []fwSpec{{ID: "f0"}, {ID: "f1", Demand: []Demand{{Resources: cpuMem(8000, 1), Count: 1}}}},
			want:   []offerKey{{"f0", "a1", "cpus:4000;mem:4096;ports:[31000-31009]", 0}},
		},
		{
			name:   "suppressed undeclared framework gets nothing",
			agents: ag,
			fws:    []fwSpec{{ID: "f0", Suppressed: true}},
			want:   []offerKey{},
		},
		{
			// Declared, wanting nothing for now: not the whole idle agent.
			name:   "a shape of count zero gets nothing",
			agents: ag,
			fws:    []fwSpec{{ID: "f0", Demand: []Demand{{Resources: unit, Count: 0}}}},
			want:   []offerKey{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(PolicyDynamic)
			if tc.min != nil {
				cfg.MinAllocatable = tc.min
			}
			a := setup(t, cfg, tc.agents, tc.fws)
			d := a.Allocate(t0)
			if got := sortedKeys(d.Offers); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("offers: got %v, want %v", got, tc.want)
			}
			if err := checkInvariants(a); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAllocator_Suppress_noOffersUntilRevive(t *testing.T) {
	tests := []struct {
		name string
		fw   fwSpec
		want offerKey
	}{
		{"declared", fwSpec{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 1}}}, offerKey{"f1", "a1", "cpus:1000;mem:1024", 1}},
		{"undeclared", fwSpec{ID: "f1"}, offerKey{"f1", "a1", "cpus:2000;mem:2048", 0}},
		{"suppressed at registration", fwSpec{ID: "f1", Suppressed: true}, offerKey{"f1", "a1", "cpus:2000;mem:2048", 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := setup(t, testConfig(PolicyDynamic), []AgentInfo{agentInfo("a1", cpuMem(2000, 2048), nil)}, []fwSpec{tc.fw})
			must(t, a.Suppress("f1"))
			for i, now := range []time.Time{t0, at(time.Minute), at(time.Hour)} {
				if d := a.Allocate(now); len(d.Offers) != 0 {
					t.Fatalf("round %d while suppressed: got %v, want no offers", i, keys(d.Offers))
				}
			}
			must(t, a.Revive("f1"))
			d := a.Allocate(at(2 * time.Hour))
			if got := keys(d.Offers); !reflect.DeepEqual(got, []offerKey{tc.want}) {
				t.Fatalf("after revive: got %v, want %v", got, []offerKey{tc.want})
			}
		})
	}
}

func TestAllocator_Allocate_outstandingOffersCountTowardShares(t *testing.T) {
	unit := []Demand{{Resources: cpuMem(1000, 1024), Count: Unlimited}}
	t.Run("second agent goes to the framework without an offer", func(t *testing.T) {
		a := setup(t, testConfig(PolicyDynamic),
			[]AgentInfo{agentInfo("a1", cpuMem(1000, 1024), nil), agentInfo("a2", cpuMem(1000, 1024), nil)},
			[]fwSpec{{ID: "f1", Demand: unit}, {ID: "f2", Demand: unit}})
		got := sortedKeys(a.Allocate(t0).Offers)
		want := []offerKey{{"f1", "a1", "cpus:1000;mem:1024", 1}, {"f2", "a2", "cpus:1000;mem:1024", 1}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("offers: got %v, want %v", got, want)
		}
	})
	t.Run("offer held from an earlier round", func(t *testing.T) {
		a := setup(t, testConfig(PolicyDynamic), []AgentInfo{agentInfo("a1", cpuMem(1000, 1024), nil)},
			[]fwSpec{{ID: "f1", Demand: unit}})
		offerOn(t, a.Allocate(t0).Offers, "f1", "a1")
		addFw(t, a, "f2", "")
		demand(t, a, "f2", unit...)
		addAgent(t, a, "a2", cpuMem(1000, 1024), nil)
		got := keys(a.Allocate(at(time.Second)).Offers)
		want := []offerKey{{"f2", "a2", "cpus:1000;mem:1024", 1}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("offers: got %v, want %v", got, want)
		}
		sh, dom, err := a.FrameworkShares("f1")
		must(t, err)
		if dom != 0.5 || sh[protocol.ResCPUs] != 0.5 {
			t.Fatalf("f1 shares: got %v (dominant %v), want cpus 0.5", sh, dom)
		}
	})
}

func TestAllocator_Allocate_rotatingCursor(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic),
		[]AgentInfo{agentInfo("a1", cpuMem(1000, 1024), nil), agentInfo("a2", cpuMem(1000, 1024), nil), agentInfo("a3", cpuMem(1000, 1024), nil)},
		[]fwSpec{{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 1}}}})
	var got []string
	for i := range 5 {
		now := at(time.Duration(i) * time.Second)
		d := a.Allocate(now)
		if len(d.Offers) != 1 {
			t.Fatalf("round %d: got %v, want one offer", i, keys(d.Offers))
		}
		got = append(got, string(d.Offers[0].AgentID))
		must(t, a.Decline("f1", ids(d.Offers[0]), 0, now))
	}
	if want := []string{"a1", "a2", "a3", "a1", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("first agent per round: got %v, want %v", got, want)
	}
}

// TestAllocator_Allocate_wideRole checks DRF order among many siblings (a
// node with that many children keeps them sorted).
func TestAllocator_Allocate_wideRole(t *testing.T) {
	const n = 12
	unit := cpuMem(1000, 1024)
	tests := []struct {
		name     string
		busy     int   // frameworks f0..f(busy-1) already run one task
		capacity int64 // units on the agent offered
		want     func(i int) int64
	}{
		{"one unit each", 0, n, func(int) int64 { return 1 }},
		{"two units each", 0, 2 * n, func(int) int64 { return 2 }},
		{"idle frameworks first", n / 2, n / 2, func(i int) int64 { return int64(btoi(i >= n/2)) }},
	}
	for _, tc := range tests {
		for _, p := range Policies() {
			t.Run(tc.name+"/"+string(p), func(t *testing.T) {
				a := newAlloc(t, testConfig(p))
				if tc.busy > 0 {
					addAgent(t, a, "busy", cpuMem(int64(tc.busy)*1000, int64(tc.busy)*1024), nil)
				}
				for i := range n {
					id := fmt.Sprintf("f%02d", i)
					addFw(t, a, id, "wide")
					demand(t, a, id, Demand{Resources: unit, Count: Unlimited})
					if i < tc.busy {
						must(t, a.AddUsage(protocol.FrameworkID(id), "busy", unit))
					}
				}
				addAgent(t, a, "a1", cpuMem(tc.capacity*1000, tc.capacity*1024), nil)
				got := map[string]int64{}
				for _, o := range a.Allocate(t0).Offers {
					if o.AgentID != "a1" {
						t.Fatalf("offer on %s", o.AgentID)
					}
					got[string(o.FrameworkID)] = o.Tasks
				}
				for i := range n {
					id := fmt.Sprintf("f%02d", i)
					if got[id] != tc.want(i) {
						t.Fatalf("tasks offered: got %v, want %d for %s", got, tc.want(i), id)
					}
				}
			})
		}
	}
}

// BUG (same root cause as above, observable through the API): under the
// paper policy a saturated resource is left out of shares, but a resource
// saturated by an allocation round still counts, so the same state reached
// two ways reports different dominant shares.
func TestAllocator_Shares_saturatedResourceIgnored(t *testing.T) {
	build := func(viaRound bool) float64 {
		a := setup(t, testConfig(PolicyPaper), []AgentInfo{agentInfo("a1", res("cpus", 4000, "gpus", 4), nil)}, []fwSpec{{ID: "f1"}})
		if viaRound {
			demand(t, a, "f1", Demand{Resources: res("cpus", 1000), Count: Unlimited})
			a.Allocate(t0) // offers all 4000 cpus to f1
		} else {
			must(t, a.AddUsage("f1", "a1", res("cpus", 4000)))
			demand(t, a, "f1", Demand{Resources: res("cpus", 1000), Count: Unlimited})
		}
		for _, n := range a.Shares() {
			if n.Path == "f1" {
				return n.DominantShare
			}
		}
		t.Fatal("f1 missing from Shares")
		return 0
	}
	if got, want := build(true), build(false); got != want || want != 0 {
		t.Fatalf("f1 dominant share with cpus saturated by an offer: got %v, want %v (as when saturated by usage, 0)", got, want)
	}
}

// Availability (the set Y of dynamic H-DRF) follows an agent's free
// vector as it shrinks and grows in place: vec.add and vec.sub change
// their receiver, so a comparison of the old and new vectors would see
// none.
func TestAllocator_Allocate_availability(t *testing.T) {
	for _, p := range []Policy{PolicyDynamic, PolicyPaper} {
		t.Run(string(p), func(t *testing.T) {
			a := setup(t, testConfig(p), []AgentInfo{agentInfo("a1", cpuMem(4000, 4096), nil)}, []fwSpec{
				{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 4}}},
				{ID: "f2", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: Unlimited}}},
			})
			d := a.Allocate(t0)
			if err := checkAvailability(a); err != nil {
				t.Errorf("after allocating the whole agent: %v", err)
			}
			a.Rescind(ids(d.Offers...), "test")
			if err := checkAvailability(a); err != nil {
				t.Errorf("after rescinding: %v", err)
			}
		})
	}
}
