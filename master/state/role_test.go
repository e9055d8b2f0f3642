package state

import (
	"math"
	"reflect"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestState_Apply_setRole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	q := &Quota{
		Guarantee: protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000}),
		Limit:     protocol.Scalars(map[string]int64{protocol.ResCPUs: 4000}),
	}
	res := h.must(CmdSetRole, &SetRole{Path: "eng/prod", Weight: 3, Quota: q})
	h.must(CmdSetRole, &SetRole{Path: "eng", Weight: 1})
	r, ok := h.view().Role("eng/prod")
	if !ok {
		t.Fatal("role eng/prod missing")
	}
	if res.(*Role) != r {
		t.Errorf("got result %v, want the stored role %v", res, r)
	}
	if r.Weight != 3 || r.Quota == nil || r.Quota.Limit.Scalar(protocol.ResCPUs) != 4000 {
		t.Errorf("got role %+v, want weight 3 and cpus limit 4000", r)
	}
	// Replace.
	h.must(CmdSetRole, &SetRole{Path: "eng/prod", Weight: 5})
	r, _ = h.view().Role("eng/prod")
	if r.Weight != 5 || r.Quota != nil {
		t.Errorf("got role %+v after replace, want weight 5 and no quota", r)
	}
	var paths []string
	for _, r := range h.view().Roles() {
		paths = append(paths, r.Path)
	}
	if len(paths) != 2 || paths[0] != "eng" || paths[1] != "eng/prod" {
		t.Errorf("got roles %v, want [eng eng/prod]", paths)
	}
}

func TestState_Apply_setRoleErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	inv := protocol.ErrInvalidArgument
	runErrCases(t, h, []errCase{
		{"bad path", CmdSetRole, &SetRole{Path: "eng//x", Weight: 1}, inv},
		{"empty path", CmdSetRole, &SetRole{Weight: 1}, inv},
		{"zero weight", CmdSetRole, &SetRole{Path: "a", Weight: 0}, inv},
		{"negative weight", CmdSetRole, &SetRole{Path: "a", Weight: -1}, inv},
		{"NaN weight", CmdSetRole, &SetRole{Path: "a", Weight: math.NaN()}, inv},
		{"huge weight", CmdSetRole, &SetRole{Path: "a", Weight: 1e7}, inv},
		{"bad quota resources", CmdSetRole, &SetRole{Path: "a", Weight: 1, Quota: &Quota{
			Guarantee: protocol.Scalars(map[string]int64{"cpus": -1}),
		}}, protocol.ErrInvalidResources},
		{"guarantee above limit", CmdSetRole, &SetRole{Path: "a", Weight: 1, Quota: &Quota{
			Guarantee: protocol.Scalars(map[string]int64{"cpus": 5}),
			Limit:     protocol.Scalars(map[string]int64{"cpus": 4}),
		}}, inv},
		{"group offer constraint", CmdSetRole, &SetRole{Path: "a", Weight: 1,
			OfferConstraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpUnique}}}, inv},
		{"soft offer constraint", CmdSetRole, &SetRole{Path: "a", Weight: 1,
			OfferConstraints: []protocol.Constraint{{Attribute: "rack", Op: protocol.OpExists, Soft: true}}}, inv},
		{"malformed offer constraint", CmdSetRole, &SetRole{Path: "a", Weight: 1,
			OfferConstraints: []protocol.Constraint{{Attribute: "rack", Op: "~"}}}, inv},
		{"unknown preemption policy", CmdSetRole, &SetRole{Path: "a", Weight: 1, Preemption: "sometimes"}, inv},
	})
}

func TestState_Apply_setRolePreemption(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.must(CmdSetRole, &SetRole{Path: "eng/batch", Weight: 1, Preemption: "off"})
	if r, _ := h.view().Role("eng/batch"); r.Preemption != "off" {
		t.Fatalf("role %+v, want preemption off", r)
	}
	h.must(CmdSetRole, &SetRole{Path: "eng/batch", Weight: 1})
	if r, _ := h.view().Role("eng/batch"); r.Preemption != "" {
		t.Fatalf("role %+v after a set without a policy, want it inherited", r)
	}
}

// A role's offer constraints are stored and survive a snapshot.
func TestState_Apply_setRoleOfferConstraints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cs := []protocol.Constraint{{Attribute: "pool", Op: protocol.OpEq, Value: "gpu"}, {Attribute: "zone", Op: protocol.OpIn, Values: []string{"z1", "z2"}}}
	h.must(CmdSetRole, &SetRole{Path: "ml", Weight: 1, OfferConstraints: cs})
	for _, s := range []*State{h.s, roundTrip(t, h.s)} {
		r, ok := s.Snapshot().Role("ml")
		if !ok || !reflect.DeepEqual(r.OfferConstraints, cs) {
			t.Fatalf("role ml: %+v, want its two offer constraints", r)
		}
	}
}

func TestState_Apply_removeRole(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdRemoveRole, &RemoveRole{Path: "eng"})
	if _, ok := h.view().Role("eng"); ok {
		t.Error("got role eng after remove, want none")
	}
	if _, ok := h.view().Framework("fw-1"); !ok {
		t.Error("framework in the removed role is gone, want it kept")
	}
	runErrCases(t, h, []errCase{
		{"unknown", CmdRemoveRole, &RemoveRole{Path: "eng"}, protocol.ErrUnknownRole},
	})
}
