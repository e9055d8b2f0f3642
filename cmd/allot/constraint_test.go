package main

import (
	"reflect"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestParseConstraint(t *testing.T) {
	for in, want := range map[string]protocol.Constraint{
		"pool==gpu":          {Attribute: "pool", Op: protocol.OpEq, Value: "gpu"},
		"kernel >= 6.1":      {Attribute: "kernel", Op: protocol.OpGe, Value: "6.1"},
		"mem_gb<=64":         {Attribute: "mem_gb", Op: protocol.OpLe, Value: "64"},
		"rack != r3":         {Attribute: "rack", Op: protocol.OpNe, Value: "r3"},
		"zone in z1, z2":     {Attribute: "zone", Op: protocol.OpIn, Values: []string{"z1", "z2"}},
		"zone not_in z3":     {Attribute: "zone", Op: protocol.OpNotIn, Values: []string{"z3"}},
		"gpu exists":         {Attribute: "gpu", Op: protocol.OpExists},
		"hostname regex ^w-": {Attribute: "hostname", Op: protocol.OpRegex, Value: "^w-"},
	} {
		got, err := parseConstraint(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseConstraint(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "pool", "==gpu", "gpu exists yes", "zone in", "x regex ("} {
		if c, err := parseConstraint(in); err == nil {
			t.Errorf("parseConstraint(%q) = %+v, want an error", in, c)
		}
	}
}
