package offers

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestAllocator_Launch: one call checks and makes an accept. A task
// naming another agent than its offers', no offer, or more than the offer
// is refused and nothing changes (the offer stays outstanding, usage
// stays zero); a launch that leaves part of its offer unused keeps the
// agent from the framework for RefuseRemainder; Made is when the offer
// was made.
func TestAllocator_Launch(t *testing.T) {
	fx := newAcceptFixture(t)
	a := fx.a
	task := func(id string, agent protocol.AgentID, port uint64) LaunchTask {
		return LaunchTask{ID: protocol.TaskID(id), Agent: agent, Resources: fx.unitWithPort(port)}
	}
	refused := []struct {
		name string
		req  Launch
		want error
	}{
		{"a task names another agent", Launch{Framework: "f1", Offers: ids(fx.f1a1),
			Tasks: []LaunchTask{task("t1", "a1", 31000), task("t2", "a2", 31001)}}, protocol.ErrOfferMismatch},
		{"no offer", Launch{Framework: "f1", Tasks: []LaunchTask{task("t1", "a1", 31000)}}, protocol.ErrInvalidArgument},
		{"more than the offer", Launch{Framework: "f1", Offers: ids(fx.f1a1), Tasks: []LaunchTask{
			task("t1", "a1", 31000), task("t2", "a1", 31001), task("t3", "a1", 31002)}}, protocol.ErrInsufficient},
	}
	for _, tc := range refused {
		if _, err := a.Launch(tc.req, t0); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if _, ok := a.Offer(fx.f1a1.ID); !ok {
			t.Fatalf("%s: the refused launch used the offer", tc.name)
		}
	}
	if u, err := a.Usage("f1"); err != nil || !u.IsEmpty() {
		t.Fatalf("usage after refused launches: %v", u)
	}

	// One task of the offer's two: the rest is refused to f1 for 10 s,
	// so the next round offers it elsewhere; without the filter, to f1.
	for _, refuse := range []time.Duration{10 * time.Second, 0} {
		fx := newAcceptFixture(t)
		acc, err := fx.a.Launch(Launch{Framework: "f1", Offers: ids(fx.f1a1), Tasks: []LaunchTask{task("t1", "a1", 31000)},
			RefuseRemainder: refuse}, t0.Add(time.Second))
		if err != nil || acc.Agent != "a1" || !acc.Remainder || !acc.Made.Equal(fx.f1a1.Made) || len(acc.Tasks) != 1 {
			t.Fatalf("launch: %+v, %v", acc, err)
		}
		offered := false
		for _, o := range fx.a.Allocate(t0.Add(2 * time.Second)).Offers {
			offered = offered || o.FrameworkID == "f1" && o.AgentID == "a1"
		}
		if want := refuse == 0; offered != want {
			t.Errorf("refusing the remainder %v: a1 offered to f1 again %v, want %v", refuse, offered, want)
		}
	}
}

// TestAllocator_Launch_pinnedOnLeftover: a non-preemptible task is refused
// on a revocable (leftover) offer, and the offer stays; a preemptible one
// is launched on it.
func TestAllocator_Launch_pinnedOnLeftover(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(500), nil)
	addFw(t, a, "F1", "")
	must(t, a.SetLeftoverDemand("F1", []Demand{{Resources: cpus(100), Count: 1}}, 1))
	d := a.Allocate(t0)
	if len(d.Offers) != 1 || d.Offers[0].Kind != KindLeftover {
		t.Fatalf("offers: %+v, want one leftover offer", d.Offers)
	}
	o := d.Offers[0]
	pinned := LaunchTask{ID: "p", Agent: "m1", Resources: cpus(100), NonPreemptible: true}
	if _, err := a.Launch(Launch{Framework: "F1", Offers: ids(o), Tasks: []LaunchTask{pinned}}, t0); !errors.Is(err, protocol.ErrNotPreemptible) {
		t.Fatalf("a pinned task on a leftover offer: %v, want ErrNotPreemptible", err)
	}
	if _, ok := a.Offer(o.ID); !ok {
		t.Fatal("the refused launch used the offer")
	}
	pinned.NonPreemptible = false
	if acc, err := a.Launch(Launch{Framework: "F1", Offers: ids(o), Tasks: []LaunchTask{pinned}}, t0); err != nil || acc.Kinds[0] != KindLeftover {
		t.Fatalf("a preemptible task on it: %+v, %v", acc, err)
	}
}
