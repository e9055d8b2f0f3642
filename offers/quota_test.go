package offers

import (
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// offeredCPUs sums the CPUs of the offers made to the frameworks named.
func offeredCPUs(d Decisions, fws ...string) int64 {
	var n int64
	for _, fw := range fws {
		for _, o := range offersFor(d.Offers, fw) {
			n += o.Resources.Scalar(protocol.ResCPUs)
		}
	}
	return n
}

// A limit on a nested role bounds what its frameworks are offered together,
// fair units and whole-agent remainders alike, across agents; a sibling
// role takes the rest; removing the limit lifts the bound.
func TestAllocator_RoleLimit(t *testing.T) {
	agents := []AgentInfo{
		agentInfo("a1", cpuMem(4000, 4096), nil), agentInfo("a2", cpuMem(4000, 4096), nil),
		agentInfo("a3", cpuMem(4000, 4096), nil),
	}
	fws := []fwSpec{
		{ID: "f1", Role: "eng/batch", Demand: []Demand{{Resources: cpuMem(1000, 512), Count: 100}}},
		{ID: "f2", Role: "eng/batch", Demand: []Demand{{Resources: cpuMem(1000, 512), Count: 100}}},
		{ID: "f3", Role: "eng/batch/late"}, // no declared demand: remainder offers
		{ID: "f4", Role: "ads", Demand: []Demand{{Resources: cpuMem(1000, 512), Count: 100}}},
	}
	a := setup(t, testConfig(PolicyDynamic), agents, fws)
	must(t, a.SetRoleLimit("eng/batch", protocol.Scalars(map[string]int64{protocol.ResCPUs: 5000})))
	d := a.Allocate(t0)
	if got := offeredCPUs(d, "f1", "f2", "f3"); got != 5000 {
		t.Fatalf("eng/batch offered %d milli-CPUs, want its limit 5000", got)
	}
	if got := offeredCPUs(d, "f4"); got != 7000 {
		t.Fatalf("ads offered %d milli-CPUs, want the other 7000", got)
	}
	// Memory is not limited: the batch offers hold 512 MiB per CPU unit.
	var mem int64
	for _, fw := range []string{"f1", "f2"} {
		for _, o := range offersFor(d.Offers, fw) {
			mem += o.Resources.Scalar(protocol.ResMem)
		}
	}
	if mem != 5*512 {
		t.Fatalf("eng/batch offered %d MiB, want 2560", mem)
	}
	// Declined offers come back under the same bound.
	for _, o := range d.Offers {
		must(t, a.Decline(o.FrameworkID, ids(o), 0, at(time.Second)))
	}
	d = a.Allocate(at(2 * time.Second))
	if got := offeredCPUs(d, "f1", "f2", "f3"); got != 5000 {
		t.Fatalf("after declines eng/batch offered %d, want 5000", got)
	}
	for _, o := range d.Offers {
		must(t, a.Decline(o.FrameworkID, ids(o), 0, at(3*time.Second)))
	}
	must(t, a.SetRoleLimit("eng/batch", protocol.Resources{}))
	d = a.Allocate(at(4 * time.Second))
	if got := offeredCPUs(d, "f1", "f2", "f3"); got <= 5000 {
		t.Fatalf("without the limit eng/batch offered %d, want more than 5000", got)
	}
	if err := a.SetRoleLimit("", protocol.Scalars(map[string]int64{protocol.ResCPUs: 1})); err == nil {
		t.Fatal("a limit on the root: nil error")
	}
}

// A limit on a parent bounds its nested roles together, and the held count
// follows launches and releases: what runs counts, and what ends frees room.
func TestAllocator_RoleLimitNestedAndRunning(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic),
		[]AgentInfo{agentInfo("a1", cpuMem(8000, 8192), nil)},
		[]fwSpec{
			{ID: "f1", Role: "eng/a", Demand: []Demand{{Resources: cpuMem(1000, 512), Count: 100}}},
			{ID: "f2", Role: "eng/b", Demand: []Demand{{Resources: cpuMem(1000, 512), Count: 100}}},
		})
	must(t, a.SetRoleLimit("eng", protocol.Scalars(map[string]int64{protocol.ResCPUs: 3000})))
	d := a.Allocate(t0)
	if got := offeredCPUs(d, "f1", "f2"); got != 3000 {
		t.Fatalf("eng offered %d, want 3000", got)
	}
	o := offersFor(d.Offers, "f1")[0]
	_, err := a.Accept("f1", ids(o), []protocol.Resources{cpuMem(1000, 512)}, at(time.Second))
	must(t, err)
	for _, o := range offersFor(d.Offers, "f2") {
		must(t, a.Decline("f2", ids(o), 0, at(time.Second)))
	}
	// f1 runs one task; eng may hold two more.
	if got := offeredCPUs(a.Allocate(at(2*time.Second)), "f1", "f2"); got != 2000 {
		t.Fatalf("with one task running eng offered %d, want 2000", got)
	}
}
