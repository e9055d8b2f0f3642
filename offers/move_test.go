package offers

import (
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// roleShare returns the allocation the role at path holds, per Shares.
func roleAllocation(a *Allocator, path string) protocol.Resources {
	for _, s := range a.Shares() {
		if s.Path == path && !s.Framework {
			return s.Allocation
		}
	}
	return protocol.Resources{}
}

// A framework moved to another role takes its running tasks and offers
// along: the old role holds nothing, the new one all of it, the new role's
// limit binds further offers, and its demand is served under the new role.
func TestAllocator_MoveFramework(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic), []AgentInfo{agentInfo("a1", cpus(8000), nil)},
		[]fwSpec{{ID: "f1", Role: "old", Demand: []Demand{{Resources: cpus(1000), Count: 3}}}})
	d := a.Allocate(t0)
	o := offerOn(t, d.Offers, "f1", "a1")
	if _, err := a.Accept("f1", ids(o), []protocol.Resources{cpus(1000), cpus(1000)}, t0); err != nil {
		t.Fatal(err)
	}
	if got := roleAllocation(a, "old").Scalar(protocol.ResCPUs); got != 2000 {
		t.Fatalf("old holds %d before the move, want 2000", got)
	}
	must(t, a.SetRoleLimit("new", cpus(2500)))
	must(t, a.MoveFramework("f1", "new/sub", 2))
	if got := roleAllocation(a, "old").Scalar(protocol.ResCPUs); got != 0 {
		t.Fatalf("old holds %d after the move, want 0", got)
	}
	if got := roleAllocation(a, "new").Scalar(protocol.ResCPUs); got != 2000 {
		t.Fatalf("new holds %d after the move, want 2000", got)
	}
	// One more task is pending; new's limit of 2.5 CPUs leaves room for none.
	if got := offersFor(a.Allocate(at(time.Second)).Offers, "f1"); len(got) != 0 {
		t.Fatalf("offers past new's limit: %v", got)
	}
	must(t, a.SetRoleLimit("new", protocol.Resources{}))
	if got := offeredCPUs(a.Allocate(at(2*time.Second)), "f1"); got != 1000 {
		t.Fatalf("offered %d after lifting the limit, want the last task's 1000", got)
	}
	ex, err := a.Explain("f1", at(2*time.Second))
	must(t, err)
	if ex.Role != "new/sub" {
		t.Fatalf("explained role %q, want new/sub", ex.Role)
	}
	if err := a.MoveFramework("f1", "new/sub", -1); err == nil {
		t.Fatal("a negative weight was accepted")
	}
	if err := a.MoveFramework("nosuch", "x", 1); err == nil {
		t.Fatal("an unknown framework was moved")
	}
}
