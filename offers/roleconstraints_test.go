package offers

import (
	"reflect"
	"testing"

	"github.com/allot-project/allot/protocol"
)

var gpuPool = []protocol.Constraint{{Attribute: "pool", Op: protocol.OpEq, Value: "gpu"}}

func poolAgents() []AgentInfo {
	pool := func(p string) protocol.Attributes { return protocol.Attributes{"pool": protocol.Text(p)} }
	return []AgentInfo{
		agentInfo("a1", cpus(4000), pool("gpu")),
		agentInfo("a2", cpus(4000), pool("general")),
		agentInfo("a3", cpus(4000), nil),
	}
}

// agentsOffered lists the agents of fw's offers in d.
func agentsOffered(d Decisions, fw string) []protocol.AgentID {
	var out []protocol.AgentID
	for _, o := range offersFor(d.Offers, fw) {
		out = append(out, o.AgentID)
	}
	return out
}

// A role's offer constraints keep its frameworks, and those of the roles
// below it, to the agents that satisfy them, in every kind of offer;
// frameworks elsewhere are not bound; removing them opens every agent.
func TestRoleOfferConstraints(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic), poolAgents(), []fwSpec{
		{ID: "fair", Role: "ml/train", Demand: unitTasks},
		{ID: "whole", Role: "ml"}, // no declared demand: remainder offers
		{ID: "other", Role: "web", Demand: []Demand{{Resources: cpus(1000), Count: 3}}},
	})
	must(t, a.SetRoleOfferConstraints("ml", gpuPool))
	d := a.Allocate(t0)
	for _, fw := range []string{"fair", "whole"} {
		for _, ag := range agentsOffered(d, fw) {
			if ag != "a1" {
				t.Fatalf("%s offered %s outside ml's gpu pool: %v", fw, ag, kindKeys(d.Offers))
			}
		}
	}
	if got := offeredCPUs(d, "fair"); got == 0 {
		t.Fatalf("ml/train got nothing on the gpu agent: %v", kindKeys(d.Offers))
	}
	if got := offeredCPUs(d, "other"); got != 3000 {
		t.Fatalf("web offered %d milli-CPUs, want its 3000 anywhere", got)
	}

	ex, err := a.Explain("fair", t0)
	must(t, err)
	if got := ex.Shapes[0].Agents; got.Role != 2 {
		t.Fatalf("explain: agents %+v, want 2 outside the role's constraints", got)
	}

	must(t, a.SetRoleOfferConstraints("ml", nil))
	b := setup(t, testConfig(PolicyDynamic), poolAgents(), []fwSpec{{ID: "fair", Role: "ml/train", Demand: unitTasks}})
	must(t, b.SetRoleOfferConstraints("ml", gpuPool))
	must(t, b.SetRoleOfferConstraints("ml", nil))
	if got := agentsOffered(b.Allocate(t0), "fair"); len(got) != 3 {
		t.Fatalf("constraints removed: offers on %v, want all three agents", got)
	}
}

// Leftover offers honour the constraints too.
func TestRoleOfferConstraints_leftover(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic), poolAgents(), []fwSpec{{ID: "alt", Role: "ml", Demand: []Demand{}}})
	must(t, a.SetLeftoverDemand("alt", []Demand{{Resources: cpus(1000), Count: Unlimited}}, 100))
	must(t, a.SetRoleOfferConstraints("ml", gpuPool))
	d := a.Allocate(t0)
	if got := agentsOffered(d, "alt"); !reflect.DeepEqual(got, []protocol.AgentID{"a1"}) {
		t.Fatalf("leftover offers on %v, want a1 alone", got)
	}
}

func TestSetRoleOfferConstraints_rejects(t *testing.T) {
	a := setup(t, testConfig(PolicyDynamic), nil, nil)
	for _, cs := range [][]protocol.Constraint{
		{{Attribute: "pool", Op: protocol.OpEq, Value: "gpu", Soft: true}},
		{{Attribute: "rack", Op: protocol.OpUnique}},
		{{Attribute: "", Op: protocol.OpExists}},
		{{Attribute: "x", Op: "~~"}},
	} {
		if err := a.SetRoleOfferConstraints("ml", cs); err == nil {
			t.Errorf("SetRoleOfferConstraints(%v) accepted", cs)
		}
	}
	if err := a.SetRoleOfferConstraints("", gpuPool); err == nil {
		t.Error("offer constraints on the root accepted")
	}
}
