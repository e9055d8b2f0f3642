package offers

import (
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// oneBigAgent is agent a1 with room for two unitDemand tasks, and f1 and
// f2 demanding unlimited units.
func oneBigAgent(t *testing.T) *Allocator {
	t.Helper()
	cfg := testConfig(PolicyDynamic)
	cfg.OfferTimeout = 0
	return setup(t, cfg, []AgentInfo{agentInfo("a1", cpuMem(2000, 2048), nil)},
		[]fwSpec{{ID: "f1", Demand: []Demand{unitDemand}}, {ID: "f2", Demand: []Demand{unitDemand}}})
}

// launchOne accepts fw's offer on a1 with one unit task.
func launchOne(t *testing.T, a *Allocator, os []Offer, fw string, now time.Time) {
	t.Helper()
	if _, err := a.AcceptTasks(protocol.FrameworkID(fw), ids(offerOn(t, os, fw, "a1")), []protocol.Resources{cpuMem(1000, 1024)}, now); err != nil {
		t.Fatal(err)
	}
}

// TestAllocator_Decline_filterLapsesWhenTheAgentOutgrowsIt: a filter
// refuses what was declined, as Mesos's does, not the agent for good:
// when a task ends and the agent has more free than the framework
// refused, the framework is offered it again at once, whoever's task it
// was.
func TestAllocator_Decline_filterLapsesWhenTheAgentOutgrowsIt(t *testing.T) {
	for _, owner := range []string{"f1", "f2"} {
		t.Run("task of "+owner, func(t *testing.T) {
			a := oneBigAgent(t)
			must(t, a.Suppress("f2"))
			if owner == "f2" {
				must(t, a.Suppress("f1"))
				must(t, a.Revive("f2"))
			}
			launchOne(t, a, a.Allocate(t0).Offers, owner, t0)
			must(t, a.Revive("f1"))
			must(t, a.Suppress("f2"))
			rest := offerOn(t, a.Allocate(at(time.Second)).Offers, "f1", "a1")
			if got := rest.Resources.Scalars[protocol.ResCPUs]; got != 1000 {
				t.Fatalf("f1 offered %d cpus of what is left, want 1000", got)
			}
			must(t, a.Decline("f1", ids(rest), time.Hour, at(time.Second)))
			if got := a.Allocate(at(2 * time.Second)).Offers; len(got) != 0 {
				t.Fatalf("within the refusal, nothing returned: got %v, want none", keys(got))
			}
			must(t, a.Recover(protocol.FrameworkID(owner), "a1", cpuMem(1000, 1024)))
			want := []offerKey{{"f1", "a1", "cpus:2000;mem:2048", 2}}
			if got := keys(a.Allocate(at(3 * time.Second)).Offers); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the task ended: got %v, want %v", got, want)
			}
		})
	}
}

// TestAllocator_Decline_filterHoldsWithinWhatWasRefused: a task that ends
// leaving the agent with no more free than the framework refused does
// not lift the filter.
func TestAllocator_Decline_filterHoldsWithinWhatWasRefused(t *testing.T) {
	a := oneBigAgent(t)
	must(t, a.Suppress("f2"))
	whole := offerOn(t, a.Allocate(t0).Offers, "f1", "a1")
	must(t, a.Decline("f1", ids(whole), time.Hour, t0))
	must(t, a.Revive("f2"))
	launchOne(t, a, a.Allocate(at(time.Second)).Offers, "f2", at(time.Second))
	must(t, a.Suppress("f2"))
	must(t, a.Recover("f2", "a1", cpuMem(1000, 1024)))
	if got := a.Allocate(at(2 * time.Second)).Offers; len(got) != 0 {
		t.Fatalf("agent back to what f1 refused: got %v, want none", keys(got))
	}
	if got := keys(a.Allocate(at(time.Hour)).Offers); len(got) != 1 || got[0].Fw != "f1" {
		t.Fatalf("at the refusal's end: got %v, want one offer to f1", got)
	}
}
