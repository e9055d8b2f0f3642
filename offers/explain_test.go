package offers

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Explain sorts every agent under the first reason that keeps a task off
// it: a1 draining, a2 declined with a filter, a3 on the wrong rack, a4 too
// small, a5 able to take one task.
func TestAllocator_Explain_agentsByReason(t *testing.T) {
	rack := func(r string) protocol.Attributes { return protocol.Attributes{"rack": protocol.Text(r)} }
	unit := cpuMem(1000, 1024)
	a := setup(t, testConfig(PolicyDynamic), []AgentInfo{
		agentInfo("a1", cpuMem(4000, 4096), rack("r1")),
		agentInfo("a2", cpuMem(4000, 4096), rack("r1")),
		agentInfo("a3", cpuMem(4000, 4096), rack("r2")),
		agentInfo("a4", cpuMem(500, 4096), rack("r1")),
		agentInfo("a5", cpuMem(4000, 4096), rack("r1")),
	}, []fwSpec{{ID: "f1", Role: "eng", Demand: []Demand{{Resources: unit, Count: 2,
		Constraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpEq, Value: "r1"}}}}}})
	must(t, a.RefuseAgent("f1", "a2", time.Minute, t0))
	if _, err := a.SetDraining("a1", true); err != nil {
		t.Fatal(err)
	}

	ex, err := a.Explain("f1", t0)
	must(t, err)
	if ex.Role != "eng" || ex.Suppressed || !ex.Declared || ex.Agents != 5 || ex.Offers != 0 {
		t.Fatalf("explanation header: %+v", ex)
	}
	if want := []AgentFilter{{Agent: "a2", Until: t0.Add(time.Minute)}}; !reflect.DeepEqual(ex.Filters, want) {
		t.Fatalf("filters %+v, want %+v", ex.Filters, want)
	}
	if len(ex.Shapes) != 1 {
		t.Fatalf("shapes %+v, want one", ex.Shapes)
	}
	s := ex.Shapes[0]
	if want := (AgentFit{Draining: 1, Filtered: 1, Constraints: 1, Resources: 1, Fit: 1}); s.Agents != want {
		t.Fatalf("agents by reason %+v, want %+v", s.Agents, want)
	}
	if s.Kind != KindFair || s.Pending != 2 || s.Offered != 0 || !s.Resources.Equal(unit) || len(s.Constraints) != 1 {
		t.Fatalf("shape %+v", s)
	}
	if r := ex.Reasons(); len(r) != 0 {
		t.Fatalf("reasons %q with a5 free for a task, want none", r)
	}

	// After a round the two tasks sit in an offer on a5: nothing is
	// pending, and a5 no longer has room for a third of the same shape.
	d := a.Allocate(t0)
	if o := offersFor(d.Offers, "f1"); len(o) != 1 || o[0].AgentID != "a5" {
		t.Fatalf("offers %+v, want one on a5", o)
	}
	ex, err = a.Explain("f1", t0)
	must(t, err)
	if s := ex.Shapes[0]; s.Pending != 0 || s.Offered != 2 || ex.Offers != 1 || !ex.Offered.Equal(cpuMem(2000, 2048)) {
		t.Fatalf("after the round: %+v, shape %+v", ex, s)
	}
	if r := ex.Reasons(); len(r) != 1 || !strings.Contains(r[0], "no pending tasks") {
		t.Fatalf("reasons %q, want only 'no pending tasks'", r)
	}

	// Once the filter expires it no longer counts, though the next round
	// has not lifted it yet.
	ex, err = a.Explain("f1", t0.Add(2*time.Minute))
	must(t, err)
	if len(ex.Filters) != 0 || ex.Shapes[0].Agents.Filtered != 0 {
		t.Fatalf("expired filter still reported: %+v", ex)
	}

	if _, err := a.Explain("nosuch", t0); !errors.Is(err, ErrUnknownFramework) {
		t.Fatalf("Explain of an unknown framework: %v, want ErrUnknownFramework", err)
	}
}

// A role at its quota limit and a suppressed framework are named as
// reasons; a shape that fits no agent says why.
func TestAllocator_Explain_reasons(t *testing.T) {
	unit := cpuMem(1000, 1024)
	a := setup(t, testConfig(PolicyDynamic),
		[]AgentInfo{agentInfo("a1", cpuMem(4000, 4096), nil)},
		[]fwSpec{
			{ID: "f1", Role: "eng/prod", Demand: []Demand{{Resources: unit, Count: Unlimited}}},
			{ID: "f2", Role: "ops", Suppressed: true, Demand: []Demand{{Resources: cpuMem(8000, 1024), Count: 1}}},
		})
	must(t, a.SetRoleLimit("eng", cpuMem(1000, 1<<20)))
	a.Allocate(t0)

	ex, err := a.Explain("f1", t0)
	must(t, err)
	s := ex.Shapes[0]
	if !reflect.DeepEqual(s.LimitedBy, []string{"eng"}) || s.Pending != Unlimited {
		t.Fatalf("f1's shape %+v, want limited by eng with unlimited tasks pending", s)
	}
	if r := ex.Reasons(); len(r) != 1 || !strings.Contains(r[0], `role "eng" is at its quota limit`) {
		t.Fatalf("f1's reasons %q", r)
	}

	ex, err = a.Explain("f2", t0)
	must(t, err)
	r := ex.Reasons()
	if len(r) != 2 || !strings.Contains(r[0], "suppressed") || !strings.Contains(r[1], "fits no agent now: 1 too few free resources") {
		t.Fatalf("f2's reasons %q", r)
	}
}
