package offers

import (
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// acceptFixture is an allocator after one round at t0:
//
//	a1, a2: cpus 2000, mem 2048, ports 31000-31003; a3 the same with rack=r3;
//	a4: gpus 2 only (registers gpus, offered to nobody).
//	f1 demands 4 x {cpus 1000, mem 1024, 1 port} -> 2 units on a1, 2 on a2.
//	f2 demands 1 x {cpus 1000, mem 1024} on rack r3 -> 1 unit on a3.
//	f9 declares nothing -> the remainder of a3.
//
// No scalars are free afterwards, so any offer a later round makes comes
// from resources an operation released.
type acceptFixture struct {
	a            *Allocator
	f1a1, f1a2   Offer
	f2a3, f9a3   Offer
	unitWithPort func(port uint64) protocol.Resources
}

func newAcceptFixture(t *testing.T) *acceptFixture {
	t.Helper()
	r3 := protocol.Attributes{"rack": protocol.Text("r3")}
	a := setup(t, testConfig(PolicyDynamic),
		[]AgentInfo{
			agentInfo("a1", withPorts(cpuMem(2000, 2048), 31000, 31003), nil),
			agentInfo("a2", withPorts(cpuMem(2000, 2048), 31000, 31003), nil),
			agentInfo("a3", withPorts(cpuMem(2000, 2048), 31000, 31003), r3),
			agentInfo("a4", res("gpus", 2), nil),
		},
		[]fwSpec{
			{ID: "f1", Demand: []Demand{{Resources: cpuMem(1000, 1024), Ports: 1, Count: 4}}},
			{ID: "f2", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 1,
				Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r3"}}}}},
			{ID: "f9"},
		})
	d := a.Allocate(t0)
	fx := &acceptFixture{a: a,
		f1a1: offerOn(t, d.Offers, "f1", "a1"), f1a2: offerOn(t, d.Offers, "f1", "a2"),
		f2a3: offerOn(t, d.Offers, "f2", "a3"), f9a3: offerOn(t, d.Offers, "f9", "a3"),
		unitWithPort: func(p uint64) protocol.Resources { return withPorts(cpuMem(1000, 1024), p, p) },
	}
	want := []offerKey{
		{"f1", "a1", "cpus:2000;mem:2048;ports:[31000-31001]", 2},
		{"f1", "a2", "cpus:2000;mem:2048;ports:[31000-31001]", 2},
		{"f2", "a3", "cpus:1000;mem:1024", 1},
		{"f9", "a3", "cpus:1000;mem:1024;ports:[31000-31003]", 0},
	}
	if got := sortedKeys(d.Offers); !reflect.DeepEqual(got, want) {
		t.Fatalf("fixture offers: got %v, want %v", got, want)
	}
	return fx
}

func TestAllocator_Accept_invalid(t *testing.T) {
	type fx = acceptFixture
	tests := []struct {
		name   string
		fw     protocol.FrameworkID
		offers func(*fx) []protocol.OfferID
		tasks  func(*fx) []protocol.Resources
		want   error
	}{
		{"unknown framework", "f7", f1a1IDs, oneUnit, protocol.ErrUnknownFramework},
		{"unknown offer", "f1", func(*fx) []protocol.OfferID { return []protocol.OfferID{"o-999"} }, oneUnit, protocol.ErrUnknownOffer},
		{"another framework's offer", "f1", func(x *fx) []protocol.OfferID { return ids(x.f2a3) }, oneUnit, protocol.ErrUnknownOffer},
		{"own offer plus another's", "f1", func(x *fx) []protocol.OfferID { return ids(x.f1a1, x.f9a3) }, oneUnit, protocol.ErrUnknownOffer},
		{"offers on two agents", "f1", func(x *fx) []protocol.OfferID { return ids(x.f1a1, x.f1a2) }, oneUnit, protocol.ErrOfferMismatch},
		{"same offer twice", "f1", func(x *fx) []protocol.OfferID { return ids(x.f1a1, x.f1a1) }, oneUnit, protocol.ErrInvalidArgument},
		{"no offers", "f1", func(*fx) []protocol.OfferID { return nil }, oneUnit, protocol.ErrInvalidArgument},
		{"tasks exceed the offer", "f1", f1a1IDs, func(x *fx) []protocol.Resources {
			return []protocol.Resources{cpuMem(1000, 1024), cpuMem(1001, 1024)}
		}, protocol.ErrInsufficient},
		{"memory exceeds the offer", "f1", f1a1IDs, tasks(cpuMem(100, 2049)), protocol.ErrInsufficient},
		{"unknown resource", "f1", f1a1IDs, tasks(res("cpus", 1000, "fpga", 1)), protocol.ErrInsufficient},
		{"resource the offer lacks", "f1", f1a1IDs, tasks(res("cpus", 1000, "gpus", 1)), protocol.ErrInsufficient},
		{"range resource not offered", "f1", f1a1IDs, tasks(protocol.Resources{
			Scalars: map[string]int64{"cpus": 1}, Ranges: map[string]protocol.Ranges{"vlans": {{Begin: 1, End: 1}}}}), protocol.ErrInsufficient},
		{"port free on the agent but not offered", "f1", f1a1IDs, tasks(withPorts(cpuMem(1000, 1024), 31002, 31002)), protocol.ErrInsufficient},
		{"port outside the agent", "f1", f1a1IDs, tasks(withPorts(cpuMem(1000, 1024), 80, 80)), protocol.ErrInsufficient},
		{"two tasks share a port", "f1", f1a1IDs, func(x *fx) []protocol.Resources {
			return []protocol.Resources{x.unitWithPort(31000), withPorts(cpuMem(500, 500), 31000, 31001)}
		}, protocol.ErrInvalidArgument},
		{"negative amount", "f1", f1a1IDs, tasks(cpuMem(-1, 1024)), protocol.ErrInvalidResources},
		{"negative with positive rest", "f1", f1a1IDs, func(x *fx) []protocol.Resources {
			return []protocol.Resources{cpuMem(2000, 2048), cpuMem(1000, -1)}
		}, protocol.ErrInvalidResources},
		{"invalid resource name", "f1", f1a1IDs, tasks(res("CPUs", 1)), protocol.ErrInvalidResources},
		{"empty task", "f1", f1a1IDs, tasks(protocol.Resources{}), protocol.ErrInvalidArgument},
		{"all-zero task", "f1", f1a1IDs, tasks(cpuMem(0, 0)), protocol.ErrInvalidArgument},
		{"empty task after a valid one", "f1", f1a1IDs, func(x *fx) []protocol.Resources {
			return []protocol.Resources{x.unitWithPort(31000), {}}
		}, protocol.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newAcceptFixture(t)
			before, free := snap(x.a), freeOf(x.a, "a1")
			ag, err := x.a.Accept(tc.fw, tc.offers(x), tc.tasks(x), at(time.Second))
			wantErr(t, "Accept", err, tc.want)
			if ag != "" {
				t.Errorf("failed Accept returned agent %q", ag)
			}
			sameState(t, "failed Accept", before, x.a)
			if got := freeOf(x.a, "a1"); !got.Equal(free) {
				t.Fatalf("a1 free: got %s, want %s", got, free)
			}
			if d := x.a.Allocate(at(2 * time.Second)); len(d.Offers)+len(d.Rescinds) != 0 {
				t.Fatalf("round after failed Accept: got %+v, want nothing", d)
			}
			// The offer is still good.
			if _, err := x.a.Accept("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31000)}, at(3*time.Second)); err != nil {
				t.Fatalf("Accept after the failed one: %v", err)
			}
		})
	}
	t.Run("second accept of the same offer", func(t *testing.T) {
		x := newAcceptFixture(t)
		if _, err := x.a.Accept("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31000)}, at(time.Second)); err != nil {
			t.Fatal(err)
		}
		before, free := snap(x.a), freeOf(x.a, "a1")
		_, err := x.a.Accept("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31001)}, at(time.Second))
		wantErr(t, "second Accept", err, protocol.ErrUnknownOffer)
		sameState(t, "second Accept", before, x.a)
		if got := freeOf(x.a, "a1"); !got.Equal(free) {
			t.Fatalf("a1 free: got %s, want %s", got, free)
		}
	})
	t.Run("expired offer", func(t *testing.T) {
		x := newAcceptFixture(t)
		x.a.Expire(at(time.Minute))
		_, err := x.a.Accept("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31000)}, at(time.Minute))
		wantErr(t, "Accept of expired offer", err, protocol.ErrUnknownOffer)
	})
}

func f1a1IDs(x *acceptFixture) []protocol.OfferID { return ids(x.f1a1) }

func oneUnit(x *acceptFixture) []protocol.Resources {
	return []protocol.Resources{x.unitWithPort(31000)}
}

func tasks(rs ...protocol.Resources) func(*acceptFixture) []protocol.Resources {
	return func(*acceptFixture) []protocol.Resources { return rs }
}

func TestAllocator_Accept_success(t *testing.T) {
	tests := []struct {
		name      string
		tasks     func(*acceptFixture) []protocol.Resources
		wantUsage protocol.Resources
		wantFree  protocol.Resources // a1 after the accept
		wantNext  []offerKey         // the next round
	}{
		{
			name: "whole offer, two declared tasks",
			tasks: func(x *acceptFixture) []protocol.Resources {
				return []protocol.Resources{x.unitWithPort(31000), x.unitWithPort(31001)}
			},
			wantUsage: cpuMem(2000, 2048),
			wantFree:  withPorts(protocol.Resources{}, 31002, 31003),
			wantNext:  []offerKey{}, // f1's 4 tasks: 2 running, 2 offered on a2
		},
		{
			name:      "one declared task, remainder back",
			tasks:     oneUnit,
			wantUsage: cpuMem(1000, 1024),
			wantFree:  withPorts(cpuMem(1000, 1024), 31001, 31003),
			wantNext:  []offerKey{{"f1", "a1", "cpus:1000;mem:1024;ports:[31001-31001]", 1}},
		},
		{
			name:      "task of no declared shape",
			tasks:     tasks(cpuMem(500, 500)),
			wantUsage: cpuMem(500, 500),
			wantFree:  withPorts(cpuMem(1500, 1548), 31000, 31003),
			wantNext: []offerKey{
				{"f1", "a1", "cpus:1000;mem:1024;ports:[31000-31000]", 1},
				{"f9", "a1", "cpus:500;mem:524;ports:[31001-31003]", 0},
			},
		},
		{
			name:      "no tasks returns the offer",
			tasks:     tasks(),
			wantUsage: protocol.Resources{},
			wantFree:  withPorts(cpuMem(2000, 2048), 31000, 31003),
			wantNext:  []offerKey{{"f1", "a1", "cpus:2000;mem:2048;ports:[31000-31001]", 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newAcceptFixture(t)
			ag, err := x.a.Accept("f1", ids(x.f1a1), tc.tasks(x), at(time.Second))
			must(t, err)
			if ag != "a1" {
				t.Fatalf("Accept agent: got %q, want a1", ag)
			}
			if _, ok := x.a.Offer(x.f1a1.ID); ok {
				t.Fatal("accepted offer still outstanding")
			}
			u, _ := x.a.Usage("f1")
			if !u.Equal(tc.wantUsage) {
				t.Fatalf("Usage(f1): got %s, want %s", u, tc.wantUsage)
			}
			if got := freeOf(x.a, "a1"); !got.Equal(tc.wantFree) {
				t.Fatalf("a1 free: got %s, want %s", got, tc.wantFree)
			}
			if err := checkInvariants(x.a); err != nil {
				t.Fatal(err)
			}
			if got := sortedKeys(x.a.Allocate(at(2 * time.Second)).Offers); !reflect.DeepEqual(got, tc.wantNext) {
				t.Fatalf("next round: got %v, want %v", got, tc.wantNext)
			}
		})
	}
}

// Launched tasks lower the declared count: after f1 launches 3 of its 4
// tasks and declines the rest, only one is offered again.
func TestAllocator_Accept_launchedTasksNotReoffered(t *testing.T) {
	x := newAcceptFixture(t)
	now := at(time.Second)
	_, err := x.a.Accept("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31000), x.unitWithPort(31001)}, now)
	must(t, err)
	_, err = x.a.Accept("f1", ids(x.f1a2), []protocol.Resources{x.unitWithPort(31000)}, now)
	must(t, err)
	var tasks int64
	for _, o := range offersFor(x.a.Allocate(at(2*time.Second)).Offers, "f1") {
		tasks += o.Tasks
	}
	if tasks != 1 {
		t.Fatalf("f1 tasks offered after launching 3 of 4: got %d, want 1", tasks)
	}
}

// An accept that leaves part of its offer unused says so; one that uses all
// of it does not. RefuseAgent then keeps the agent's remainder from the
// framework until the filter expires, as a decline filter does.
func TestAllocator_Accept_remainderAndRefuse(t *testing.T) {
	x := newAcceptFixture(t)
	now := at(time.Second)
	acc, err := x.a.AcceptTasks("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31000)}, now)
	must(t, err)
	if !acc.Remainder || acc.Agent != "a1" {
		t.Fatalf("one of two units launched: %+v, want a remainder on a1", acc)
	}
	acc, err = x.a.AcceptTasks("f1", ids(x.f1a2), []protocol.Resources{x.unitWithPort(31000), x.unitWithPort(31001)}, now)
	must(t, err)
	if acc.Remainder {
		t.Fatalf("the whole offer launched: %+v, want no remainder", acc)
	}
	must(t, x.a.RefuseAgent("f1", "a1", 10*time.Second, now))
	must(t, x.a.Suppress("f9")) // it would take a1's remainder meanwhile
	if got := offersFor(x.a.Allocate(at(2*time.Second)).Offers, "f1"); len(got) != 0 {
		t.Fatalf("offers to f1 while a1 is refused to it: %v", got)
	}
	if got := offersFor(x.a.Allocate(at(12*time.Second)).Offers, "f1"); len(got) != 1 || got[0].AgentID != "a1" {
		t.Fatalf("offers to f1 after the filter expired: %v, want a1's remainder", got)
	}
	if err := x.a.RefuseAgent("f1", "nosuch", time.Second, now); err == nil {
		t.Fatal("RefuseAgent on an unknown agent: nil error")
	}
}

func TestAllocator_Recover(t *testing.T) {
	tests := []struct {
		name      string
		fw        protocol.FrameworkID
		agent     protocol.AgentID
		res       protocol.Resources
		want      error              // nil: success
		wantUsage protocol.Resources // f1 after
		wantNext  []offerKey
	}{
		{"one task", "f1", "a1", withPorts(cpuMem(1000, 1024), 31000, 31000), nil, cpuMem(1000, 1024),
			[]offerKey{{"f9", "a1", "cpus:1000;mem:1024;ports:[31000-31000,31002-31003]", 0}}},
		{"everything", "f1", "a1", withPorts(cpuMem(2000, 2048), 31000, 31001), nil, protocol.Resources{},
			[]offerKey{{"f9", "a1", "cpus:2000;mem:2048;ports:[31000-31003]", 0}}},
		{"more than held", "f1", "a1", cpuMem(2001, 1024), protocol.ErrInvalidArgument, cpuMem(2000, 2048), []offerKey{}},
		{"ports not held", "f1", "a1", withPorts(cpuMem(1000, 1024), 31002, 31002), protocol.ErrInvalidArgument, cpuMem(2000, 2048), []offerKey{}},
		{"agent where it runs nothing", "f1", "a2", cpuMem(1, 1), protocol.ErrInvalidArgument, cpuMem(2000, 2048), []offerKey{}},
		{"other framework", "f2", "a1", cpuMem(1, 1), protocol.ErrInvalidArgument, cpuMem(2000, 2048), []offerKey{}},
		{"unknown framework", "f7", "a1", cpuMem(1, 1), protocol.ErrUnknownFramework, cpuMem(2000, 2048), []offerKey{}},
		{"unknown agent", "f1", "a7", cpuMem(1, 1), protocol.ErrUnknownAgent, cpuMem(2000, 2048), []offerKey{}},
		// BUG: Recover does not validate its resources; a negative amount
		// passes the "held" check and moves the agent's free pool below zero.
		{"negative amount", "f1", "a1", cpuMem(-1000, 0), protocol.ErrInvalidResources, cpuMem(2000, 2048), []offerKey{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newAcceptFixture(t)
			_, err := x.a.Accept("f1", ids(x.f1a1), []protocol.Resources{x.unitWithPort(31000), x.unitWithPort(31001)}, at(time.Second))
			must(t, err)
			before := snap(x.a)
			err = x.a.Recover(tc.fw, tc.agent, tc.res)
			if tc.want == nil {
				must(t, err)
			} else {
				wantErr(t, "Recover", err, tc.want)
				sameState(t, "failed Recover", before, x.a)
			}
			if u, _ := x.a.Usage("f1"); !u.Equal(tc.wantUsage) {
				t.Fatalf("Usage(f1): got %s, want %s", u, tc.wantUsage)
			}
			if err := checkInvariants(x.a); err != nil {
				t.Fatal(err)
			}
			if got := sortedKeys(x.a.Allocate(at(2 * time.Second)).Offers); !reflect.DeepEqual(got, tc.wantNext) {
				t.Fatalf("next round: got %v, want %v", got, tc.wantNext)
			}
		})
	}
}
