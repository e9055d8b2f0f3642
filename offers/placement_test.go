package offers

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func TestParsePlacement(t *testing.T) {
	for in, want := range map[string]Placement{"": PlacementSpread, "spread": PlacementSpread, "first-fit": PlacementFirstFit, "pack": PlacementPack} {
		if got, err := ParsePlacement(in); err != nil || got != want {
			t.Errorf("ParsePlacement(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParsePlacement("random"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParsePlacement(random): %v, want ErrInvalid", err)
	}
	cfg := DefaultConfig()
	cfg.Placement = "tight"
	if err := cfg.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Validate with placement tight: %v", err)
	}
}

// agentsOf places count tasks of milli-GPUs one round at a time and
// returns the agent of each.
func agentsOf(t *testing.T, a *Allocator, milli int64, count int) []protocol.AgentID {
	t.Helper()
	var out []protocol.AgentID
	for i := range count {
		now := time.Unix(int64(100+i), 0)
		demand(t, a, "f", Demand{Resources: gpuTask(milli), Count: 1})
		d := a.Allocate(now)
		if len(d.Offers) != 1 {
			t.Fatalf("round %d: offers %v", i, d.Offers)
		}
		acc, err := a.AcceptTasks("f", []protocol.OfferID{d.Offers[0].ID}, []protocol.Resources{gpuTask(milli)}, now)
		must(t, err)
		out = append(out, acc.Agent)
	}
	return out
}

func placementAlloc(t *testing.T, p Placement) *Allocator {
	t.Helper()
	cfg := testConfig(PolicyDynamic)
	cfg.Placement = p
	a := newAlloc(t, cfg)
	for _, id := range []string{"g0", "g1", "g2"} {
		addAgent(t, a, id, gpuAgent(1), nil)
	}
	addFw(t, a, "f", "r")
	return a
}

// Spread moves on from agent to agent; first-fit fills the first agent
// first; pack puts the second half-device share beside the first, where
// it leaves whole devices free elsewhere, and so does first-fit here.
func TestPlacement_whereSharesGo(t *testing.T) {
	got := map[Placement][]protocol.AgentID{}
	for _, p := range []Placement{PlacementSpread, PlacementFirstFit, PlacementPack} {
		got[p] = agentsOf(t, placementAlloc(t, p), 500, 2)
	}
	if s := got[PlacementSpread]; s[0] == s[1] {
		t.Errorf("spread put both shares on %s", s[0])
	}
	if f := got[PlacementFirstFit]; f[0] != "g0" || f[1] != "g0" {
		t.Errorf("first-fit put the shares on %v, want g0 twice", f)
	}
	if p := got[PlacementPack]; p[0] != p[1] {
		t.Errorf("pack put the shares on %v, want one agent", p)
	}
}

// Pack keeps whole devices for whole-device work: a share goes where a
// device is already split, not to the first agent with a whole one as
// first-fit does.
func TestPlacement_packKeepsWholeDevices(t *testing.T) {
	for _, p := range []Placement{PlacementFirstFit, PlacementPack} {
		a := placementAlloc(t, p)
		// g1's device is taken whole, g2's is split by a 300 share.
		whole := gpuTask(1000)
		whole.Scalars[protocol.GPUResource(0)] = 1000
		must(t, a.AddUsage("f", "g1", whole))
		share := gpuTask(300)
		share.Scalars[protocol.GPUResource(0)] = 300
		must(t, a.AddUsage("f", "g2", share))
		got := agentsOf(t, a, 300, 1)[0]
		want := protocol.AgentID("g2")
		if p == PlacementFirstFit {
			want = "g0"
		}
		if got != want {
			t.Errorf("%s put a 300 share on %s, want %s", p, got, want)
		}
	}
}

// A pending shape of unlimited tasks (a framework that takes all it is
// offered) beside a finite one is ordered by packing like any other,
// every agent in turn.
func TestPlacement_packUnlimited(t *testing.T) {
	a := placementAlloc(t, PlacementPack)
	addFw(t, a, "g", "r")
	demand(t, a, "f", Demand{Resources: gpuTask(500), Count: 1})
	demand(t, a, "g", Demand{Resources: gpuTask(500), Count: Unlimited})
	d := a.Allocate(time.Unix(100, 0))
	units := int64(0)
	for _, o := range d.Offers {
		units += o.Tasks
	}
	if units != 6 {
		t.Fatalf("offers %v hold %d units, want two on each of three agents", d.Offers, units)
	}
}

// Work that fragments nothing anywhere goes where the fewest devices are
// left, even where the room it leaves is not the tightest: the CPUs beside
// free devices stay for work that needs the devices. Here a CPU task
// fits both agents without making any device unusable; the small agent,
// with its device free, is the tighter fit (it would be left with half the
// cluster's GPUs and little else, the large one with 90% of the CPUs).
func TestPlacement_packKeepsRoomBesideDevices(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.Placement = PlacementPack
	a := newAlloc(t, cfg)
	addAgent(t, a, "large", gpuAgent(1), nil)
	addFw(t, a, "f", "r")
	// The large agent's device runs a task of the mix.
	if got := agentsOf(t, a, 1000, 1); got[0] != "large" {
		t.Fatalf("the device task went to %v", got)
	}
	small := gpuAgent(1)
	small.Scalars[protocol.ResCPUs], small.Scalars[protocol.ResMem] = 4000, 8000
	addAgent(t, a, "small", small, nil)
	now := time.Unix(200, 0)
	cpuTask := cpuMem(2000, 4096)
	demand(t, a, "f", Demand{Resources: cpuTask, Count: 1})
	d := a.Allocate(now)
	if len(d.Offers) == 0 {
		t.Fatal("no offer")
	}
	acc, err := a.AcceptTasks("f", []protocol.OfferID{d.Offers[0].ID}, []protocol.Resources{cpuTask}, now)
	must(t, err)
	if acc.Agent != "large" {
		t.Errorf("the CPU task went to %s, want the agent with no device free", acc.Agent)
	}
}

// A task of a share of one device uses no more of the devices than the
// CPUs left let run: a CPU task that would leave an agent CPUs for one
// share task where its device could hold two fragments that device, and
// goes instead where the CPUs are plenty, though more devices are free
// there.
func TestPlacement_packCountsDevicesTheCPUsStrand(t *testing.T) {
	cfg := testConfig(PolicyDynamic)
	cfg.Placement = PlacementPack
	a := newAlloc(t, cfg)
	withCPUs := func(n int, cpus int64) protocol.Resources {
		r := gpuAgent(n)
		r.Scalars[protocol.ResCPUs] = cpus
		return r
	}
	addAgent(t, a, "mix", withCPUs(1, 8000), nil)
	addFw(t, a, "f", "r")
	share := gpuTask(500)
	share.Scalars[protocol.ResCPUs] = 4000
	// The mix: tasks of half a device and 4 CPUs.
	now := time.Unix(100, 0)
	demand(t, a, "f", Demand{Resources: share, Count: 1})
	d := a.Allocate(now)
	if len(d.Offers) != 1 {
		t.Fatalf("offers %v", d.Offers)
	}
	_, err := a.AcceptTasks("f", []protocol.OfferID{d.Offers[0].ID}, []protocol.Resources{share}, now)
	must(t, err)
	addAgent(t, a, "tight", withCPUs(1, 8000), nil)
	addAgent(t, a, "roomy", withCPUs(4, 64000), nil)
	cpuTask := cpuMem(4000, 1024)
	now = now.Add(time.Second)
	demand(t, a, "f", Demand{Resources: cpuTask, Count: 1})
	d = a.Allocate(now)
	if len(d.Offers) == 0 {
		t.Fatal("no offer")
	}
	acc, err := a.AcceptTasks("f", []protocol.OfferID{d.Offers[0].ID}, []protocol.Resources{cpuTask}, now)
	must(t, err)
	if acc.Agent != "roomy" {
		t.Errorf("the CPU task went to %s, want roomy: on tight it leaves CPUs for one share task of the two its device holds", acc.Agent)
	}
}
