package protocol

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseConstraint(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Constraint{
		"pool==gpu":            {Attribute: "pool", Op: OpEq, Value: "gpu"},
		"kernel >= 6.1":        {Attribute: "kernel", Op: OpGe, Value: "6.1"},
		"mem_gb<=64":           {Attribute: "mem_gb", Op: OpLe, Value: "64"},
		"rack != r3":           {Attribute: "rack", Op: OpNe, Value: "r3"},
		"zone in z1, z2":       {Attribute: "zone", Op: OpIn, Values: []string{"z1", "z2"}},
		"zone not_in z3":       {Attribute: "zone", Op: OpNotIn, Values: []string{"z3"}},
		"gpu exists":           {Attribute: "gpu", Op: OpExists},
		"hostname regex ^w-":   {Attribute: "hostname", Op: OpRegex, Value: "^w-"},
		"hostname unique":      {Attribute: "hostname", Op: OpUnique},
		"rack same":            {Attribute: "rack", Op: OpSame},
		"rack max_per 2":       {Attribute: "rack", Op: OpMaxPer, N: 2},
		"rack == r1 soft":      {Attribute: "rack", Op: OpEq, Value: "r1", Soft: true},
		"hostname unique soft": {Attribute: "hostname", Op: OpUnique, Soft: true},
		"name == soft":         {Attribute: "name", Op: OpEq, Value: "soft"},
	} {
		got, err := ParseConstraint(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseConstraint(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "pool", "==gpu", "gpu exists yes", "zone in", "x regex (", "rack max_per", "rack max_per 0", "host unique x"} {
		if c, err := ParseConstraint(in); !errors.Is(err, ErrInvalidConstraint) {
			t.Errorf("ParseConstraint(%q) = %+v, %v; want ErrInvalidConstraint", in, c, err)
		}
	}
}
