package offers

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestCRV_steering: the unconstrained framework has the lower share, so
// without the CRV it takes the GPU agent when that agent's turn comes
// first, and the GPU framework gets nothing; with it, the GPU agent takes
// its turn last, the unconstrained framework is served as much by the plain
// agents and the GPU framework by the GPU agent.
func TestCRV_steering(t *testing.T) {
	agents := []AgentInfo{
		agentInfo("a0", cpuMem(2000, 2048), protocol.Attributes{"gpu": protocol.Text("a100")}),
		agentInfo("a1", cpuMem(2000, 2048), nil),
		agentInfo("a2", cpuMem(2000, 2048), nil),
		agentInfo("a3", cpuMem(4000, 4096), nil),
	}
	gpu := []protocol.Constraint{{Attribute: "gpu", Op: protocol.OpExists}}
	fws := []fwSpec{
		{ID: "batch", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 4}}},
		{ID: "ml", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 2, Constraints: gpu}}},
	}
	run := func(disable bool) []offerKey {
		cfg := DefaultConfig()
		cfg.DisableCRV = disable
		a := setup(t, cfg, agents, fws)
		// ml already runs 0.4 of the CPUs, more than batch will hold.
		must(t, a.AddUsage("ml", "a3", cpuMem(4000, 4096)))
		return sortedKeys(a.Allocate(t0).Offers)
	}
	off := []offerKey{
		{"batch", "a0", "cpus:2000;mem:2048", 2},
		{"batch", "a1", "cpus:2000;mem:2048", 2},
	}
	if got := run(true); !reflect.DeepEqual(got, off) {
		t.Fatalf("without CRV: got %v, want %v", got, off)
	}
	on := []offerKey{
		{"batch", "a1", "cpus:2000;mem:2048", 2},
		{"batch", "a2", "cpus:2000;mem:2048", 2},
		{"ml", "a0", "cpus:2000;mem:2048", 2},
	}
	if got := run(false); !reflect.DeepEqual(got, on) {
		t.Fatalf("with CRV: got %v, want %v", got, on)
	}
}

// TestCRV_noFrameworkLoses: from the same state, a round with the CRV
// gives no framework less than a round without it, and keeps unconstrained
// work off the scarce agents while plain agents have room.
func TestCRV_noFrameworkLoses(t *testing.T) {
	var agents []AgentInfo
	for i := 0; i < 20; i++ {
		var attrs protocol.Attributes
		if i%5 == 0 {
			attrs = protocol.Attributes{"ssd": protocol.Text("yes")}
		}
		agents = append(agents, agentInfo(fmt.Sprintf("a%02d", i), cpuMem(4000, 4096), attrs))
	}
	ssd := []protocol.Constraint{{Attribute: "ssd", Op: protocol.OpEq, Value: "yes"}}
	fws := []fwSpec{
		{ID: "db", Role: "prod", Demand: []Demand{{Resources: cpuMem(1000, 1024), Count: 10, Constraints: ssd}}},
		{ID: "web", Role: "prod", Demand: []Demand{{Resources: cpuMem(500, 512), Count: 40}}},
		{ID: "etl", Role: "batch", Demand: []Demand{{Resources: cpuMem(2000, 1024), Count: 30}}},
	}
	totals := func(disable bool) (map[string]protocol.Resources, []offerKey) {
		cfg := DefaultConfig()
		cfg.DisableCRV = disable
		a := setup(t, cfg, agents, fws)
		d := a.Allocate(t0)
		if err := checkCRV(a); err != nil {
			t.Fatal(err)
		}
		out := map[string]protocol.Resources{}
		for _, f := range fws {
			var sum protocol.Resources
			for _, o := range offersFor(d.Offers, f.ID) {
				sum = sum.Add(o.Resources)
			}
			out[f.ID] = sum
		}
		return out, sortedKeys(d.Offers)
	}
	off, offKeys := totals(true)
	on, onKeys := totals(false)
	for _, f := range fws {
		if !on[f.ID].Contains(off[f.ID]) {
			t.Errorf("%s: %s with CRV, %s without", f.ID, on[f.ID], off[f.ID])
		}
	}
	if reflect.DeepEqual(onKeys, offKeys) {
		t.Fatalf("CRV changed no placement: %v", onKeys)
	}
	for _, k := range onKeys {
		if k.Fw == "web" && (k.Agent == "a00" || k.Agent == "a05" || k.Agent == "a10" || k.Agent == "a15") {
			t.Errorf("with CRV, unconstrained %s was placed on ssd agent %s while plain agents had room", k.Fw, k.Agent)
		}
	}
}

// TestCRV_preferSteeredShape: on a scarce agent a framework takes its
// shape that needs the agent before its other shapes.
func TestCRV_preferSteeredShape(t *testing.T) {
	agents := []AgentInfo{
		agentInfo("a0", cpuMem(1000, 1024), protocol.Attributes{"gpu": protocol.Text("a100")}),
		agentInfo("a1", cpuMem(1000, 1024), nil),
	}
	fws := []fwSpec{{ID: "f1", Demand: []Demand{
		{Resources: cpuMem(1000, 1024), Count: 1},
		{Resources: cpuMem(1000, 1000), Count: 1, Constraints: []protocol.Constraint{{Attribute: "gpu", Op: protocol.OpExists}}},
	}}}
	for _, disable := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.DisableCRV = disable
		a := setup(t, cfg, agents, fws)
		d := a.Allocate(t0)
		o := offerOn(t, d.Offers, "f1", "a0")
		want := "cpus:1000;mem:1000"
		if disable {
			want = "cpus:1000;mem:1024" // first declared shape first
		}
		if o.Resources.String() != want {
			t.Errorf("DisableCRV=%v: offer on a0 %s, want %s", disable, o.Resources, want)
		}
	}
}

func TestCRV_softConstraints(t *testing.T) {
	agents := []AgentInfo{
		agentInfo("fast", cpuMem(1000, 1024), protocol.Attributes{"clock_mhz": protocol.Number(3400)}),
		agentInfo("slow1", cpuMem(1000, 1024), protocol.Attributes{"clock_mhz": protocol.Number(2000)}),
		agentInfo("slow2", cpuMem(1000, 1024), nil),
	}
	fast := protocol.Constraint{Attribute: "clock_mhz", Op: protocol.OpGe, Value: "2600", Soft: true}
	shape := Demand{Resources: cpuMem(1000, 1024), Count: 3, Constraints: []protocol.Constraint{fast}}
	offered := func(d Decisions) []string {
		var out []string
		for _, o := range d.Offers {
			out = append(out, string(o.AgentID))
		}
		slices.Sort(out)
		return out
	}
	t.Run("filters until the wait budget, then relaxes", func(t *testing.T) {
		a := setup(t, DefaultConfig(), agents, []fwSpec{{ID: "f1", Demand: []Demand{shape}}})
		if got := offered(a.Allocate(t0)); !slices.Equal(got, []string{"fast"}) {
			t.Fatalf("at 0 s: got %v, want [fast]", got)
		}
		if r := a.CRV(); len(r) != 1 || r[0].Tasks != 3 {
			t.Fatalf("soft class before relaxing: %+v", r)
		}
		// Re-declaring the same shape keeps its clock.
		demand(t, a, "f1", shape)
		if got := offered(a.Allocate(at(4900 * time.Millisecond))); got != nil {
			t.Fatalf("at 4.9 s: got %v, want nothing new", got)
		}
		if got := offered(a.Allocate(at(5 * time.Second))); !slices.Equal(got, []string{"slow1", "slow2"}) {
			t.Fatalf("at 5 s: got %v, want [slow1 slow2]", got)
		}
		if r := a.CRV(); len(r) != 1 || r[0].Tasks != 0 {
			t.Fatalf("soft class after relaxing: %+v", r)
		}
		if err := checkCRV(a); err != nil {
			t.Fatal(err)
		}
		// The count dropping to zero restarts the clock.
		demand(t, a, "f1", Demand{Resources: shape.Resources, Count: 0, Constraints: shape.Constraints})
		a.Allocate(at(6 * time.Second))
		for _, o := range a.Outstanding() {
			must(t, a.Decline(o.FrameworkID, []protocol.OfferID{o.ID}, 0, at(6*time.Second)))
		}
		demand(t, a, "f1", shape)
		if got := offered(a.Allocate(at(7 * time.Second))); !slices.Equal(got, []string{"fast"}) {
			t.Fatalf("after restarting: got %v, want [fast]", got)
		}
	})
	t.Run("zero wait never filters", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.SoftWait = 0
		a := setup(t, cfg, agents, []fwSpec{{ID: "f1", Demand: []Demand{shape}}})
		if got := offered(a.Allocate(t0)); !slices.Equal(got, []string{"fast", "slow1", "slow2"}) {
			t.Fatalf("got %v, want every agent", got)
		}
	})
	t.Run("infeasible together with hard constraints relaxes at once", func(t *testing.T) {
		d := shape
		d.Constraints = []protocol.Constraint{fast, {Attribute: "clock_mhz", Op: protocol.OpLt, Value: "2600"}}
		a := setup(t, DefaultConfig(), agents, []fwSpec{{ID: "f1", Demand: []Demand{d}}})
		if got := offered(a.Allocate(t0)); !slices.Equal(got, []string{"slow1"}) {
			t.Fatalf("got %v, want [slow1] (hard constraint kept)", got)
		}
	})
	t.Run("leftover candidates ignore soft constraints", func(t *testing.T) {
		a := setup(t, DefaultConfig(), agents, []fwSpec{{ID: "f1"}})
		must(t, a.Declare("f1", Declaration{Optional: []Demand{shape}}))
		if got := offered(a.Allocate(t0)); !slices.Equal(got, []string{"fast", "slow1", "slow2"}) {
			t.Fatalf("got %v, want every agent", got)
		}
	})
}
