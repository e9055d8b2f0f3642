package offers

import (
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func guaranteeAlloc(t *testing.T, fws []fwSpec) *Allocator {
	t.Helper()
	return setup(t, testConfig(PolicyDynamic), []AgentInfo{agentInfo("a1", cpus(10000), nil)}, fws)
}

var unitTasks = []Demand{{Resources: cpus(1000), Count: Unlimited}}

// Two equal roles split ten CPUs 5/5 by H-DRF; a guarantee of 6 on one
// gives it 6 first, and the other takes the 4 left.
func TestGuarantee_servedFirst(t *testing.T) {
	fws := []fwSpec{{ID: "fa", Role: "a", Demand: unitTasks}, {ID: "fb", Role: "b", Demand: unitTasks}}
	plain := guaranteeAlloc(t, fws).Allocate(t0)
	if offeredCPUs(plain, "fa") != 5000 || offeredCPUs(plain, "fb") != 5000 {
		t.Fatalf("without a guarantee: a %d, b %d, want 5000 each", offeredCPUs(plain, "fa"), offeredCPUs(plain, "fb"))
	}
	a := guaranteeAlloc(t, fws)
	must(t, a.SetRoleGuarantee("a", cpus(6000)))
	d := a.Allocate(t0)
	if offeredCPUs(d, "fa") != 6000 || offeredCPUs(d, "fb") != 4000 {
		t.Fatalf("with a guarantee of 6 on a: a %d, b %d, want 6000 and 4000", offeredCPUs(d, "fa"), offeredCPUs(d, "fb"))
	}
}

// A guarantee holds its headroom while its role wants nothing, and the role
// gets it as soon as it asks; removing the guarantee releases it.
func TestGuarantee_headroom(t *testing.T) {
	a := guaranteeAlloc(t, []fwSpec{{ID: "fa", Role: "a", Demand: []Demand{}}, {ID: "fb", Role: "b", Demand: unitTasks}})
	must(t, a.SetRoleGuarantee("a", cpus(6000)))
	d := a.Allocate(t0)
	if got := offeredCPUs(d, "fb"); got != 4000 || offeredCPUs(d, "fa") != 0 {
		t.Fatalf("b got %d with a's 6 held back, want 4000 (a %d)", got, offeredCPUs(d, "fa"))
	}
	ex, err := a.Explain("fb", t0)
	must(t, err)
	if r := ex.Reasons(); len(r) != 1 || !strings.Contains(r[0], "held back for quota guarantees not yet met") {
		t.Fatalf("b's reasons %q, want the guarantees' headroom", r)
	}
	demand(t, a, "fa", unitTasks...)
	if got := offeredCPUs(a.Allocate(at(time.Second)), "fa"); got != 6000 {
		t.Fatalf("a asks: offered %d, want its 6000 at once", got)
	}

	b := guaranteeAlloc(t, []fwSpec{{ID: "fa", Role: "a", Demand: []Demand{}}, {ID: "fb", Role: "b", Demand: unitTasks}})
	must(t, b.SetRoleGuarantee("a", cpus(6000)))
	must(t, b.SetRoleGuarantee("a", protocol.Resources{}))
	if got := offeredCPUs(b.Allocate(t0), "fb"); got != 10000 {
		t.Fatalf("guarantee removed: b offered %d, want all 10000", got)
	}
}

// A framework without declared demand gets a remainder offer trimmed to
// what the guarantees leave.
func TestGuarantee_remainderTrimmed(t *testing.T) {
	a := guaranteeAlloc(t, []fwSpec{{ID: "fa", Role: "a", Demand: []Demand{}}, {ID: "fb", Role: "b"}})
	must(t, a.SetRoleGuarantee("a", cpus(6000)))
	if got := offeredCPUs(a.Allocate(t0), "fb"); got != 4000 {
		t.Fatalf("remainder offer to b: %d CPUs, want 4000", got)
	}
}

// A nested role's guarantee holds against H-DRF: eng (weight 1) and ops
// (weight 3) would split ten CPUs 2.5/7.5 and eng's children 1.25 each; a
// guarantee of 4 on eng/prod gives it 4 under every policy. What follows
// is each policy's own: counting plain sums (mesos, static), eng is then
// above its weighted share, so eng/dev gets nothing and ops the 6 left;
// dynamic H-DRF sees a group at its lowest demanding child's level, so
// prod's 4 counts for eng only as much as dev holds, and dev gets one CPU.
func TestGuarantee_nested(t *testing.T) {
	for _, tc := range []struct {
		policy         Policy
		prod, dev, ops int64
	}{
		{PolicyMesos, 4000, 0, 6000},
		{PolicyStatic, 4000, 0, 6000},
		{PolicyDynamic, 4000, 1000, 5000},
	} {
		a := setup(t, testConfig(tc.policy), []AgentInfo{agentInfo("a1", cpus(10000), nil)}, []fwSpec{
			{ID: "prod", Role: "eng/prod", Demand: unitTasks},
			{ID: "dev", Role: "eng/dev", Demand: unitTasks},
			{ID: "ops", Role: "ops", Demand: unitTasks},
		})
		must(t, a.SetRole("ops", 3))
		must(t, a.SetRoleGuarantee("eng/prod", cpus(4000)))
		d := a.Allocate(t0)
		if p, dv, o := offeredCPUs(d, "prod"), offeredCPUs(d, "dev"), offeredCPUs(d, "ops"); p != tc.prod || dv != tc.dev || o != tc.ops {
			t.Errorf("%s: prod %d, dev %d, ops %d; want %d, %d, %d", tc.policy, p, dv, o, tc.prod, tc.dev, tc.ops)
		}
	}
}

// Whole tasks meet a guarantee from above: with 4-CPU tasks a guarantee of
// 6 yields two tasks (the second crosses it), and the other role gets the 2
// CPUs left.
func TestGuarantee_wholeTasks(t *testing.T) {
	a := guaranteeAlloc(t, []fwSpec{
		{ID: "fa", Role: "a", Demand: []Demand{{Resources: cpus(4000), Count: Unlimited}}},
		{ID: "fb", Role: "b", Demand: unitTasks},
	})
	must(t, a.SetRoleGuarantee("a", cpus(6000)))
	d := a.Allocate(t0)
	if fa, fb := offeredCPUs(d, "fa"), offeredCPUs(d, "fb"); fa != 8000 || fb != 2000 {
		t.Fatalf("a %d, b %d; want 8000 and 2000", fa, fb)
	}
}

func TestSetRoleGuarantee_rejects(t *testing.T) {
	a := guaranteeAlloc(t, nil)
	if err := a.SetRoleGuarantee("", cpus(1)); err == nil {
		t.Fatal("a guarantee on the root was accepted")
	}
	if err := a.SetRoleGuarantee("a", cpus(-1)); err == nil {
		t.Fatal("a negative guarantee was accepted")
	}
}
