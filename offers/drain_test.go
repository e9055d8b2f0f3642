package offers

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// A draining agent's offers are rescinded and it is offered to nobody, while
// what runs there keeps counting; reactivated, it is offered again.
func TestAllocator_SetDraining(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic),
		[]AgentInfo{agentInfo("a1", cpuMem(2000, 2048), nil), agentInfo("a2", cpuMem(2000, 2048), nil)},
		[]fwSpec{{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 8}}}})
	d := a.Allocate(t0)
	o1 := offerOn(t, d.Offers, "f1", "a1")
	_, err := a.Accept("f1", ids(o1), []protocol.Resources{cpuMem(1000, 1024)}, at(time.Second))
	must(t, err)
	before, _ := a.Usage("f1")

	rs, err := a.SetDraining("a1", true)
	must(t, err)
	if len(rs) != 0 {
		t.Fatalf("rescinds after the accept consumed a1's offer: %v, want none", rs)
	}
	if !a.Draining("a1") || a.Draining("a2") {
		t.Fatal("Draining does not report a1 alone")
	}
	for i := 2; i < 5; i++ {
		for _, o := range a.Allocate(at(time.Duration(i) * time.Second)).Offers {
			if o.AgentID == "a1" {
				t.Fatalf("round %d offered the draining a1: %+v", i, o)
			}
		}
	}
	if after, _ := a.Usage("f1"); !after.Equal(before) {
		t.Fatalf("usage moved while draining: %s, then %s", before, after)
	}
	// An outstanding offer on an agent that starts draining is rescinded.
	if _, err := a.SetDraining("a1", false); err != nil {
		t.Fatal(err)
	}
	again := offersFor(a.Allocate(at(6*time.Second)).Offers, "f1")
	var onA1 *Offer
	for i := range again {
		if again[i].AgentID == "a1" {
			onA1 = &again[i]
		}
	}
	if onA1 == nil {
		t.Fatalf("offers after reactivating a1: %v, want one on a1", again)
	}
	rs, err = a.SetDraining("a1", true)
	must(t, err)
	if len(rs) != 1 || rs[0].OfferID != onA1.ID {
		t.Fatalf("rescinds on draining: %v, want %s", rs, onA1.ID)
	}
	if _, err := a.SetDraining("nosuch", true); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("SetDraining on an unknown agent: %v, want ErrUnknownAgent", err)
	}
	// Removing a draining agent leaves availability right.
	if _, err := a.RemoveAgent("a1"); err != nil {
		t.Fatal(err)
	}
	if err := checkAvailability(a); err != nil {
		t.Fatalf("after removing a draining agent: %v", err)
	}
}
