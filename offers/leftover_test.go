package offers

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// cpus is a one-resource bundle: the Figure 2 cluster is 1000 milli-CPU,
// so 0.21 of it is 210.
func cpus(n int64) protocol.Resources { return res(protocol.ResCPUs, n) }

func declare(t testing.TB, a *Allocator, fw string, d Declaration) {
	t.Helper()
	must(t, a.Declare(protocol.FrameworkID(fw), d))
}

// kindKey is an offer summary with its kind.
type kindKey struct {
	Fw    string
	Kind  Kind
	Res   string
	Tasks int64
}

func kindKeys(os []Offer) []kindKey {
	out := make([]kindKey, 0, len(os))
	for _, o := range os {
		out = append(out, kindKey{string(o.FrameworkID), o.Kind, o.Resources.String(), o.Tasks})
	}
	return out
}

func ofKind(os []Offer, k Kind) []Offer {
	var out []Offer
	for _, o := range os {
		if o.Kind == k {
			out = append(out, o)
		}
	}
	return out
}

// figure2 declares the Carbyne Figure 2 jobs at t=0 (docs/carbyne.md)
// as framework/altruism plans them (figure2_test.go pins these values):
// J1 must start one S1 task (0.21) and may run two more S1 and both S0
// tasks (0.04) early, 5.1 task-seconds of work; J2 must start one of its
// two 0.29 tasks and may run the other early, 2.0 task-seconds.
func figure2(t testing.TB, cfg Config) *Allocator {
	t.Helper()
	a := newAlloc(t, cfg)
	addAgent(t, a, "m1", cpus(1000), nil)
	addFw(t, a, "J1", "")
	addFw(t, a, "J2", "")
	s0, s1, j2 := Demand{Resources: cpus(40)}, Demand{Resources: cpus(210)}, Demand{Resources: cpus(290)}
	n := func(d Demand, c int64) Demand { d.Count = c; return d }
	declare(t, a, "J1", Declaration{
		Demand:        []Demand{n(s1, 3), n(s0, 2)},
		MustStart:     []Demand{n(s1, 1)},
		Optional:      []Demand{n(s1, 2), n(s0, 2)},
		RemainingWork: 5.1,
	})
	declare(t, a, "J2", Declaration{
		Demand:        []Demand{n(j2, 2)},
		MustStart:     []Demand{n(j2, 1)},
		Optional:      []Demand{n(j2, 1)},
		RemainingWork: 2.0,
	})
	return a
}

// TestAllocator_Leftover_figure2 reproduces the leftover step of Figure 2
// through the allocator: the fair phase starts the must-start tasks (0.21
// for J1, 0.29 for J2) and leaves a pool of 0.5; SRTF serves J2 first (its
// second task, pool 0.21), then J1's best-aligned task, an S1 (0.21·0.21
// beats 0.04·0.21), uses the pool up. Efficiency-first ends the same way:
// J2's task is also the best aligned (0.29·0.5).
func TestAllocator_Leftover_figure2(t *testing.T) {
	want := []kindKey{
		{"J1", KindFair, "cpus:210", 1},
		{"J2", KindFair, "cpus:290", 1},
		{"J2", KindLeftover, "cpus:290", 1},
		{"J1", KindLeftover, "cpus:210", 1},
	}
	for _, order := range LeftoverOrders() {
		for _, p := range Policies() {
			t.Run(string(order)+"/"+string(p), func(t *testing.T) {
				cfg := testConfig(p)
				cfg.LeftoverOrder = order
				a := figure2(t, cfg)
				d := a.Allocate(t0)
				if got := kindKeys(d.Offers); !reflect.DeepEqual(got, want) {
					t.Fatalf("offers: got %v, want %v", got, want)
				}
				pool := int64(1000)
				for _, o := range ofKind(d.Offers, KindFair) {
					pool -= o.Resources.Scalar(protocol.ResCPUs)
				}
				var steps []int64
				for _, o := range ofKind(d.Offers, KindLeftover) {
					steps = append(steps, pool)
					pool -= o.Resources.Scalar(protocol.ResCPUs)
				}
				steps = append(steps, pool)
				if wantSteps := []int64{500, 210, 0}; !reflect.DeepEqual(steps, wantSteps) {
					t.Errorf("leftover pool: got %v, want %v", steps, wantSteps)
				}
				if free := freeOf(a, "m1"); !free.IsEmpty() {
					t.Errorf("free after the round: %s, want nothing", free)
				}
				// Every offer is launched whole: J1 runs 0.42, J2 0.58, and
				// each task carries its offer's kind.
				for _, o := range d.Offers {
					acc, err := a.AcceptTasks(o.FrameworkID, ids(o), []protocol.Resources{o.Resources}, t0)
					must(t, err)
					if !reflect.DeepEqual(acc.Kinds, []Kind{o.Kind}) {
						t.Errorf("%s: task kinds %v, want [%s]", o.ID, acc.Kinds, o.Kind)
					}
				}
				for fw, want := range map[string]int64{"J1": 420, "J2": 580} {
					u, _ := a.Usage(protocol.FrameworkID(fw))
					if got := u.Scalar(protocol.ResCPUs); got != want {
						t.Errorf("usage of %s: got %d, want %d", fw, got, want)
					}
				}
				if d := a.Allocate(t0); len(d.Offers) != 0 {
					t.Errorf("offers once the pool is used: %v", kindKeys(d.Offers))
				}
				if err := checkInvariants(a); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestAllocator_Leftover_orders: F1 (1 task-second left) wants 0.1 of a
// 0.5 pool, F2 (10 left) the whole of it. JCT-first serves F1 and F2's
// task no longer fits; efficiency-first places F2's better-aligned task
// (0.5·1 against 0.1·1), unless the remaining-work term is heavy enough.
// With m = 1, ε = 0.6/5.5 and F1 scores 0.2 − ε > 1 − 10ε.
func TestAllocator_Leftover_orders(t *testing.T) {
	tests := []struct {
		name   string
		order  LeftoverOrder
		weight float64
		want   []kindKey
	}{
		{"jct-first", LeftoverJCTFirst, 0, []kindKey{{"F1", KindLeftover, "cpus:100", 1}}},
		{"jct-first ignores the weight", LeftoverJCTFirst, 5, []kindKey{{"F1", KindLeftover, "cpus:100", 1}}},
		{"efficiency-first", LeftoverEfficiencyFirst, 0, []kindKey{{"F2", KindLeftover, "cpus:500", 1}}},
		{"efficiency-first, light work term", LeftoverEfficiencyFirst, 0.5, []kindKey{{"F2", KindLeftover, "cpus:500", 1}}},
		{"efficiency-first, work term m=1", LeftoverEfficiencyFirst, 1, []kindKey{{"F1", KindLeftover, "cpus:100", 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LeftoverOrder, cfg.LeftoverWorkWeight = tc.order, tc.weight
			a := newAlloc(t, cfg)
			addAgent(t, a, "m1", cpus(500), nil)
			addFw(t, a, "F2", "")
			addFw(t, a, "F1", "")
			must(t, a.SetLeftoverDemand("F2", []Demand{{Resources: cpus(500), Count: 1}}, 10))
			must(t, a.SetLeftoverDemand("F1", []Demand{{Resources: cpus(100), Count: 1}}, 1))
			if got := kindKeys(a.Allocate(t0).Offers); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("offers: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAllocator_Leftover_alignment: with 0.2 CPU and 0.9 memory free, a
// framework's optional shapes are chosen by alignment with what is free,
// not in the order declared: <0.1, 0.1> (0.11) beats <0.2, 0.05> (0.085),
// and again after one is placed (0.09; the other no longer fits).
// Efficiency-first across frameworks picks the best-aligned pair the same
// way, whoever declared it.
func TestAllocator_Leftover_alignment(t *testing.T) {
	for _, order := range LeftoverOrders() {
		t.Run(string(order)+"/one framework", func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LeftoverOrder = order
			a := newAlloc(t, cfg)
			addAgent(t, a, "m1", cpuMem(1000, 1000), nil)
			addFw(t, a, "F0", "")
			addFw(t, a, "F1", "")
			demand(t, a, "F0", Demand{Resources: cpuMem(800, 100), Count: 1})
			must(t, a.SetLeftoverDemand("F1", []Demand{
				{Resources: cpuMem(200, 50), Count: Unlimited},
				{Resources: cpuMem(100, 100), Count: Unlimited},
			}, 1))
			got := kindKeys(a.Allocate(t0).Offers)
			want := []kindKey{{"F0", KindFair, "cpus:800;mem:100", 1}, {"F1", KindLeftover, "cpus:200;mem:200", 2}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("offers: got %v, want %v", got, want)
			}
		})
	}
	t.Run("efficiency-first/best pair across frameworks", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.LeftoverOrder = LeftoverEfficiencyFirst
		a := newAlloc(t, cfg)
		addAgent(t, a, "m1", cpuMem(1000, 1000), nil)
		addFw(t, a, "F0", "")
		addFw(t, a, "F1", "")
		addFw(t, a, "F2", "")
		demand(t, a, "F0", Demand{Resources: cpuMem(200, 800), Count: 1})
		// Free <0.8, 0.2>: F2's <0.3, 0.05> scores 0.25, F1's <0.1, 0.15>
		// 0.11; then, on <0.5, 0.15>, F2's second task (0.1575) beats F1
		// (0.0725); on <0.2, 0.1> only F1's fits.
		must(t, a.SetLeftoverDemand("F1", []Demand{{Resources: cpuMem(100, 150), Count: 1}}, 1))
		must(t, a.SetLeftoverDemand("F2", []Demand{{Resources: cpuMem(300, 50), Count: 3}}, 100))
		got := kindKeys(a.Allocate(t0).Offers)
		want := []kindKey{{"F0", KindFair, "cpus:200;mem:800", 1}, {"F2", KindLeftover, "cpus:600;mem:100", 2}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("offers: got %v, want %v", got, want)
		}
	})
}

// TestAllocator_Leftover_onlyOptionalDemand: frameworks get leftover
// offers only for optional shapes they declared; the leftover phase comes
// before whole remainders to undeclared frameworks.
func TestAllocator_Leftover_onlyOptionalDemand(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpuMem(4000, 4096), nil)
	addFw(t, a, "fair", "")
	addFw(t, a, "spare", "")
	addFw(t, a, "mesos", "")
	demand(t, a, "fair", Demand{Resources: cpuMem(1000, 1024), Count: 1})
	declare(t, a, "spare", Declaration{Optional: []Demand{{Resources: cpuMem(1000, 1024), Count: 2}}, RemainingWork: 3})
	got := kindKeys(a.Allocate(t0).Offers)
	want := []kindKey{
		{"fair", KindFair, "cpus:1000;mem:1024", 1},
		{"spare", KindLeftover, "cpus:2000;mem:2048", 2},
		{"mesos", KindFair, "cpus:1000;mem:1024", 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("offers: got %v, want %v", got, want)
	}
	// Without optional demand nobody gets leftover, even with room left.
	b := newAlloc(t, DefaultConfig())
	addAgent(t, b, "m1", cpuMem(4000, 4096), nil)
	addFw(t, b, "fair", "")
	demand(t, b, "fair", Demand{Resources: cpuMem(1000, 1024), Count: 1})
	for round := range 3 {
		d := b.Allocate(at(time.Duration(round) * time.Hour))
		if l := ofKind(d.Offers, KindLeftover); len(l) > 0 {
			t.Fatalf("round %d: leftover offers %v to frameworks without optional demand", round, kindKeys(l))
		}
	}
}

// TestAllocator_Leftover_countsTowardShares: resources launched on
// leftover offers are usage like any other, so the next fair phase sees
// them: F1, holding 0.6 through leftover, gets no fair resources until F2
// has caught up.
func TestAllocator_Leftover_countsTowardShares(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(1000), nil)
	addFw(t, a, "F1", "")
	declare(t, a, "F1", Declaration{Optional: []Demand{{Resources: cpus(600), Count: 1}}, RemainingWork: 1})
	o := offerOn(t, a.Allocate(t0).Offers, "F1", "m1")
	if _, err := a.Accept("F1", ids(o), []protocol.Resources{cpus(600)}, t0); err != nil {
		t.Fatal(err)
	}
	addFw(t, a, "F2", "")
	if _, dom, _ := a.FrameworkShares("F1"); math.Abs(dom-0.6) > 1e-9 {
		t.Fatalf("F1 dominant share %v, want 0.6", dom)
	}
	unit := Demand{Resources: cpus(100), Count: Unlimited}
	declare(t, a, "F1", Declaration{Demand: []Demand{unit}})
	declare(t, a, "F2", Declaration{Demand: []Demand{unit}})
	got := kindKeys(a.Allocate(t0).Offers)
	if want := []kindKey{{"F2", KindFair, "cpus:400", 4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("offers: got %v, want %v", got, want)
	}
}

// TestAllocator_Leftover_launchLowersOptional launches a task on a
// leftover offer of a framework whose must-start and optional demand have
// the same shape: the launch lowers the optional count, not the
// must-start one, which stays pending for a fair offer.
//
// Mutant this catches (offers/accept.go): the swap that makes a leftover
// launch count against f.optional first removed, so it lowers f.shapes.
func TestAllocator_Leftover_launchLowersOptional(t *testing.T) {
	t.Parallel()
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpuMem(4000, 4096), nil)
	addFw(t, a, "j", "")
	x := cpuMem(1000, 1024)
	declare(t, a, "j", Declaration{
		Demand:        []Demand{{Resources: x, Count: 3}},
		MustStart:     []Demand{{Resources: x, Count: 1}},
		Optional:      []Demand{{Resources: x, Count: 2}},
		RemainingWork: 3,
	})
	leftover := ofKind(a.Allocate(t0).Offers, KindLeftover)
	if len(leftover) != 1 {
		t.Fatalf("leftover offers %v, want one", kindKeys(leftover))
	}
	if _, err := a.AcceptTasks("j", []protocol.OfferID{leftover[0].ID}, []protocol.Resources{x}, t0); err != nil {
		t.Fatal(err)
	}
	f := a.frameworks["j"]
	if len(f.shapes) != 1 || f.shapes[0].count != 1 {
		t.Errorf("must-start after a leftover launch: %d shapes, count %d; want 1 pending", len(f.shapes), f.shapes[0].count)
	}
	if len(f.optional) != 1 || f.optional[0].count != 1 {
		t.Errorf("optional after a leftover launch: %d shapes, count %d; want 1 of 2 left", len(f.optional), f.optional[0].count)
	}
}
