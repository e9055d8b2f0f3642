package offers

import (
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestAllocator_Leftover_suppressionAndFilters: leftover offers obey
// suppression and decline filters like fair ones.
func TestAllocator_Leftover_suppressionAndFilters(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(1000), nil)
	addAgent(t, a, "m2", cpus(1000), nil)
	addFw(t, a, "F", "")
	declare(t, a, "F", Declaration{Optional: []Demand{{Resources: cpus(500), Count: Unlimited}}, RemainingWork: 1})

	must(t, a.Suppress("F"))
	if d := a.Allocate(t0); len(d.Offers) != 0 {
		t.Fatalf("suppressed: got offers %v", kindKeys(d.Offers))
	}
	must(t, a.Revive("F"))
	d := a.Allocate(at(time.Second))
	if len(d.Offers) != 2 || len(ofKind(d.Offers, KindLeftover)) != 2 {
		t.Fatalf("revived: got %v, want a leftover offer on each agent", kindKeys(d.Offers))
	}
	// A plain decline filters the agent for its refuse time.
	o := offerOn(t, d.Offers, "F", "m1")
	must(t, a.Decline("F", ids(o), 10*time.Second, at(time.Second)))
	if d := a.Allocate(at(2 * time.Second)); len(d.Offers) != 0 {
		t.Fatalf("filtered: got %v", kindKeys(d.Offers))
	}
	d = a.Allocate(at(12 * time.Second))
	if got := offerOn(t, d.Offers, "F", "m1"); got.Kind != KindLeftover || got.Tasks != 2 {
		t.Fatalf("after the filter: got %+v, want a leftover offer of 2 tasks", got)
	}
	// A hard constraint of an optional shape keeps it off other agents.
	addAgent(t, a, "m3", cpus(1000), protocol.Attributes{"rack": protocol.Text("r1")})
	declare(t, a, "F", Declaration{Optional: []Demand{{Resources: cpus(500), Count: Unlimited,
		Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r1"}}}}, RemainingWork: 1})
	d = a.Allocate(at(13 * time.Second))
	if got := kindKeys(d.Offers); len(got) != 1 || d.Offers[0].AgentID != "m3" {
		t.Fatalf("constrained: got %v, want one offer on m3", got)
	}
}

// TestAllocator_DeclineLeftover: resources declined as leftover go back to
// the pool without a filter on the decliner, and the next round hands them
// to another framework's optional work; a plain decline filters.
func TestAllocator_DeclineLeftover(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(1000), nil)
	addFw(t, a, "F1", "") // undeclared: offered whole remainders
	addFw(t, a, "F2", "")
	o := offerOn(t, a.Allocate(t0).Offers, "F1", "m1")
	declare(t, a, "F2", Declaration{Optional: []Demand{{Resources: cpus(500), Count: 2}}, RemainingWork: 1})
	must(t, a.DeclineLeftover("F1", ids(o), DefaultFilter, t0))
	f1 := a.frameworks["F1"]
	if a.agents["m1"].isFiltered(f1.idx) {
		t.Fatal("DeclineLeftover installed a filter")
	}
	d := a.Allocate(t0)
	if got, want := kindKeys(d.Offers), []kindKey{{"F2", KindLeftover, "cpus:1000", 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the leftover decline: got %v, want %v", got, want)
	}
	// F2 declines normally: it is filtered, and F1, never filtered, gets
	// the remainder again in the same instant.
	must(t, a.Decline("F2", ids(d.Offers...), DefaultFilter, t0))
	d = a.Allocate(t0)
	if got, want := kindKeys(d.Offers), []kindKey{{"F1", KindFair, "cpus:1000", 0}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after F2's plain decline: got %v, want %v", got, want)
	}
	// A leftover decline with an explicit refuse time filters.
	must(t, a.DeclineLeftover("F1", ids(d.Offers...), time.Minute, t0))
	if !a.agents["m1"].isFiltered(f1.idx) {
		t.Fatal("DeclineLeftover with a refuse time installed no filter")
	}
	if err := checkInvariants(a); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "DeclineLeftover of a forged offer", a.DeclineLeftover("F1", []protocol.OfferID{"o-x"}, 0, t0), ErrUnknownOffer)
}

// TestAllocator_Leftover_oneOfferPerKind: a framework's optional tasks on
// one agent make one leftover offer beside its fair one, and accepting
// both together counts tasks against the fair offer first.
func TestAllocator_Leftover_oneOfferPerKind(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(1000), nil)
	addFw(t, a, "F", "")
	s := Demand{Resources: cpus(100)}
	n := func(c int64) []Demand { d := s; d.Count = c; return []Demand{d} }
	declare(t, a, "F", Declaration{Demand: n(5), MustStart: n(2), Optional: n(3), RemainingWork: 4})
	d := a.Allocate(t0)
	want := []kindKey{{"F", KindFair, "cpus:200", 2}, {"F", KindLeftover, "cpus:300", 3}}
	if got := kindKeys(d.Offers); !reflect.DeepEqual(got, want) {
		t.Fatalf("offers: got %v, want %v", got, want)
	}
	tasks := []protocol.Resources{cpus(100), cpus(100), cpus(100), cpus(100)}
	acc, err := a.AcceptTasks("F", ids(d.Offers...), tasks, t0)
	must(t, err)
	if want := []Kind{KindFair, KindFair, KindLeftover, KindLeftover}; !reflect.DeepEqual(acc.Kinds, want) {
		t.Fatalf("kinds: got %v, want %v", acc.Kinds, want)
	}
	f := a.frameworks["F"]
	if f.shapes[0].count != 0 || f.optional[0].count != 1 {
		t.Fatalf("counts: fair %d, optional %d; want 0 and 1", f.shapes[0].count, f.optional[0].count)
	}
	// The last optional task comes as leftover, and a task launched on it
	// lowers the optional count.
	d = a.Allocate(t0)
	if got, want := kindKeys(d.Offers), []kindKey{{"F", KindLeftover, "cpus:100", 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("offers: got %v, want %v", got, want)
	}
	acc, err = a.AcceptTasks("F", ids(d.Offers...), []protocol.Resources{cpus(100)}, t0)
	must(t, err)
	if !reflect.DeepEqual(acc.Kinds, []Kind{KindLeftover}) || f.optional[0].count != 0 {
		t.Fatalf("kinds %v, optional count %d; want [leftover] and 0", acc.Kinds, f.optional[0].count)
	}
}
