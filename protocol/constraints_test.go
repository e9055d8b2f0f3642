package protocol

import (
	"errors"
	"testing"
)

// evalAttrs has one attribute of each kind: text, number, set and a
// version-like text.
var evalAttrs = Attributes{
	"rack":     Text("r3"),
	"cores":    Number(16),
	"features": Set("avx", "sse4"),
	"kernel":   Text("5.15.0"),
}

func TestConstraint_Matches(t *testing.T) {
	t.Parallel()
	tests := constraintMatchCases
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, why := tc.c.Matches(evalAttrs)
			if got != tc.want {
				t.Errorf("%s: got %v (%s), want %v", tc.c, got, why, tc.want)
			}
			if !got && why == "" {
				t.Errorf("%s: no reason given for a miss", tc.c)
			}
			if h := tc.c.Holds(evalAttrs); h != got {
				t.Errorf("%s: Holds %v, Matches %v", tc.c, h, got)
			}
			if h := HoldHard([]Constraint{tc.c}, evalAttrs); h != got {
				t.Errorf("%s: HoldHard %v, Matches %v", tc.c, h, got)
			}
		})
	}
}

// cons is a constraint on attr with operator op and operand val (or vals).
func cons(attr string, op Op, val string, vals ...string) Constraint {
	return Constraint{Attribute: attr, Op: op, Value: val, Values: vals}
}

// constraintMatchCases are TestConstraint_Matches' constraints, each with
// whether evalAttrs satisfies it.
var constraintMatchCases = []struct {
	name string
	c    Constraint
	want bool
}{
	// ==
	{"eq text", cons("rack", OpEq, "r3"), true},
	{"eq text other", cons("rack", OpEq, "r4"), false},
	{"eq number", cons("cores", OpEq, "16"), true},
	{"eq number other spelling", cons("cores", OpEq, "16.0"), true},
	{"eq number other", cons("cores", OpEq, "8"), false},
	{"eq set", cons("features", OpEq, "{sse4,avx}"), true},
	{"eq set member only", cons("features", OpEq, "avx"), false},
	{"eq version padded", cons("kernel", OpEq, "5.15"), true},
	{"eq version other", cons("kernel", OpEq, "5.15.1"), false},
	{"eq missing", cons("gpu", OpEq, "a100"), false},
	// !=
	{"ne text", cons("rack", OpNe, "r4"), true},
	{"ne text same", cons("rack", OpNe, "r3"), false},
	{"ne number", cons("cores", OpNe, "8"), true},
	{"ne set", cons("features", OpNe, "avx"), true},
	{"ne version", cons("kernel", OpNe, "5.15.1"), true},
	{"ne missing", cons("gpu", OpNe, "a100"), true},
	// <
	{"lt text", cons("rack", OpLt, "r4"), true},
	{"lt number", cons("cores", OpLt, "20"), true},
	{"lt number equal", cons("cores", OpLt, "16"), false},
	{"lt number vs text", cons("cores", OpLt, "abc"), false},
	{"lt set", cons("features", OpLt, "zzz"), false},
	{"lt version", cons("kernel", OpLt, "6.1"), true},
	{"lt version numeric components", cons("kernel", OpLt, "5.4"), false},
	{"lt missing", cons("gpu", OpLt, "1"), false},
	// <=
	{"le number equal", cons("cores", OpLe, "16"), true},
	{"le number below", cons("cores", OpLe, "15.5"), false},
	{"le text", cons("rack", OpLe, "r3"), true},
	{"le set", cons("features", OpLe, "{avx,sse4}"), false},
	{"le version padded", cons("kernel", OpLe, "5.15"), true},
	{"le missing", cons("gpu", OpLe, "1"), false},
	// >
	{"gt number", cons("cores", OpGt, "8"), true},
	{"gt number equal", cons("cores", OpGt, "16"), false},
	{"gt text", cons("rack", OpGt, "r2"), true},
	{"gt set", cons("features", OpGt, "a"), false},
	{"gt version 5.15 > 5.4", cons("kernel", OpGt, "5.4"), true},
	{"gt missing", cons("gpu", OpGt, "0"), false},
	// >=
	{"ge number", cons("cores", OpGe, "16"), true},
	{"ge number above", cons("cores", OpGe, "17"), false},
	{"ge text", cons("rack", OpGe, "r4"), false},
	{"ge set", cons("features", OpGe, "a"), false},
	{"ge version exact", cons("kernel", OpGe, "5.15.0"), true},
	{"ge version 10 not lexical", cons("kernel", OpGe, "10.0"), false},
	{"ge missing", cons("gpu", OpGe, "0"), false},
	// in
	{"in text", cons("rack", OpIn, "", "r1", "r3"), true},
	{"in text absent", cons("rack", OpIn, "", "r1"), false},
	{"in number", cons("cores", OpIn, "", "8", "16"), true},
	{"in set intersects", cons("features", OpIn, "", "neon", "avx"), true},
	{"in set disjoint", cons("features", OpIn, "", "neon"), false},
	{"in version", cons("kernel", OpIn, "", "5.15", "6.1"), true},
	{"in missing", cons("gpu", OpIn, "", "a100"), false},
	// not_in
	{"not_in text", cons("rack", OpNotIn, "", "r1"), true},
	{"not_in text present", cons("rack", OpNotIn, "", "r3"), false},
	{"not_in number", cons("cores", OpNotIn, "", "16"), false},
	{"not_in set disjoint", cons("features", OpNotIn, "", "neon"), true},
	{"not_in set intersects", cons("features", OpNotIn, "", "avx"), false},
	{"not_in version", cons("kernel", OpNotIn, "", "6.1"), true},
	{"not_in missing", cons("gpu", OpNotIn, "", "a100"), true},
	// exists / not_exists
	{"exists text", cons("rack", OpExists, ""), true},
	{"exists set", cons("features", OpExists, ""), true},
	{"exists missing", cons("gpu", OpExists, ""), false},
	{"not_exists present", cons("cores", OpNotExists, ""), false},
	{"not_exists missing", cons("gpu", OpNotExists, ""), true},
	// regex
	{"regex text", cons("rack", OpRegex, "^r[0-9]$"), true},
	{"regex text no", cons("rack", OpRegex, "^x"), false},
	{"regex number", cons("cores", OpRegex, "^1[0-9]$"), true},
	{"regex set any member", cons("features", OpRegex, "^ss"), true},
	{"regex set none", cons("features", OpRegex, "^neon"), false},
	{"regex version", cons("kernel", OpRegex, `^5\.15\.`), true},
	{"regex invalid never matches", cons("rack", OpRegex, "("), false},
	{"regex missing", cons("gpu", OpRegex, ".*"), false},
	// group operators always pass per task
	{"unique per task", cons("rack", OpUnique, ""), true},
	{"same per task missing", cons("gpu", OpSame, ""), true},
	{"max_per per task", Constraint{Attribute: "rack", Op: OpMaxPer, N: 1}, true},
	// unknown operators never match
	{"unknown op", cons("rack", Op("~="), "r3"), false},
}

func TestMatchHard_SoftMisses(t *testing.T) {
	t.Parallel()
	cs := []Constraint{
		{Attribute: "rack", Op: OpEq, Value: "r3"},
		{Attribute: "gpu", Op: OpExists, Soft: true},
		{Attribute: "cores", Op: OpGe, Value: "32", Soft: true},
		{Attribute: "rack", Op: OpUnique},
	}
	if ok, why := MatchHard(cs, evalAttrs); !ok {
		t.Errorf("MatchHard: got false (%s), want true", why)
	}
	if got := SoftMisses(cs, evalAttrs); got != 2 {
		t.Errorf("SoftMisses: got %d, want 2", got)
	}
	cs = append(cs, Constraint{Attribute: "arch", Op: OpEq, Value: "arm64"})
	if ok, why := MatchHard(cs, evalAttrs); ok || why == "" {
		t.Errorf("MatchHard with failing hard: got %v %q, want false with reason", ok, why)
	}
}

func TestGroupAllows(t *testing.T) {
	t.Parallel()
	rack := func(v string) Attributes { return Attributes{"rack": Text(v)} }
	none := Attributes{}
	tests := []struct {
		name   string
		c      Constraint
		placed []Attributes
		cand   Attributes
		want   bool
	}{
		{"unique first", Constraint{Attribute: "rack", Op: OpUnique}, nil, rack("r1"), true},
		{"unique new value", Constraint{Attribute: "rack", Op: OpUnique}, []Attributes{rack("r1"), rack("r2")}, rack("r3"), true},
		{"unique repeat", Constraint{Attribute: "rack", Op: OpUnique}, []Attributes{rack("r1"), rack("r2")}, rack("r1"), false},
		{"unique missing", Constraint{Attribute: "rack", Op: OpUnique}, nil, none, false},
		{"unique placed missing ignored", Constraint{Attribute: "rack", Op: OpUnique}, []Attributes{none}, rack("r1"), true},
		{"same first", Constraint{Attribute: "rack", Op: OpSame}, nil, rack("r1"), true},
		{"same matching", Constraint{Attribute: "rack", Op: OpSame}, []Attributes{rack("r1"), rack("r1")}, rack("r1"), true},
		{"same differing", Constraint{Attribute: "rack", Op: OpSame}, []Attributes{rack("r1")}, rack("r2"), false},
		{"same missing", Constraint{Attribute: "rack", Op: OpSame}, []Attributes{rack("r1")}, none, false},
		{"same placed missing", Constraint{Attribute: "rack", Op: OpSame}, []Attributes{none}, rack("r1"), false},
		{"max_per under", Constraint{Attribute: "rack", Op: OpMaxPer, N: 2}, []Attributes{rack("r1")}, rack("r1"), true},
		{"max_per at limit", Constraint{Attribute: "rack", Op: OpMaxPer, N: 2}, []Attributes{rack("r1"), rack("r1")}, rack("r1"), false},
		{"max_per other value", Constraint{Attribute: "rack", Op: OpMaxPer, N: 1}, []Attributes{rack("r1")}, rack("r2"), true},
		{"max_per missing", Constraint{Attribute: "rack", Op: OpMaxPer, N: 5}, nil, none, false},
		{"max_per zero", Constraint{Attribute: "rack", Op: OpMaxPer, N: 0}, nil, rack("r1"), false},
		{"per-task op passes", Constraint{Attribute: "rack", Op: OpEq, Value: "zzz"}, nil, none, true},
		{"number values compare by text", Constraint{Attribute: "n", Op: OpUnique},
			[]Attributes{{"n": Number(1)}}, Attributes{"n": Number(1.0)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := GroupAllows(tc.c, tc.placed, tc.cand); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckGroup(t *testing.T) {
	t.Parallel()
	racks := func(vs ...string) []Attributes {
		out := make([]Attributes, len(vs))
		for i, v := range vs {
			out[i] = Attributes{"rack": Text(v)}
		}
		return out
	}
	unique := Constraint{Attribute: "rack", Op: OpUnique}
	tests := []struct {
		name    string
		cs      []Constraint
		placed  []Attributes
		wantErr bool
	}{
		{"none", nil, racks("r1", "r1"), false},
		{"unique ok", []Constraint{unique}, racks("r1", "r2", "r3"), false},
		{"unique violated", []Constraint{unique}, racks("r1", "r2", "r1"), true},
		{"soft ignored", []Constraint{{Attribute: "rack", Op: OpUnique, Soft: true}}, racks("r1", "r1"), false},
		{"per-task ignored", []Constraint{{Attribute: "rack", Op: OpEq, Value: "x"}}, racks("r1"), false},
		{"same ok", []Constraint{{Attribute: "rack", Op: OpSame}}, racks("r2", "r2"), false},
		{"same violated", []Constraint{{Attribute: "rack", Op: OpSame}}, racks("r2", "r3"), true},
		{"max_per ok", []Constraint{{Attribute: "rack", Op: OpMaxPer, N: 2}}, racks("r1", "r1", "r2"), false},
		{"max_per violated", []Constraint{{Attribute: "rack", Op: OpMaxPer, N: 2}}, racks("r1", "r1", "r1"), true},
		{"empty group", []Constraint{unique}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckGroup(tc.cs, tc.placed)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrConstraintViolated) {
				t.Errorf("got %v, want it to wrap %v", err, ErrConstraintViolated)
			}
		})
	}
}

func TestConstraint_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		c       Constraint
		wantErr bool
	}{
		{"eq", Constraint{Attribute: "rack", Op: OpEq, Value: "r1"}, false},
		{"ne", Constraint{Attribute: "rack", Op: OpNe, Value: "r1"}, false},
		{"lt", Constraint{Attribute: "cores", Op: OpLt, Value: "3"}, false},
		{"le", Constraint{Attribute: "cores", Op: OpLe, Value: "3"}, false},
		{"gt", Constraint{Attribute: "cores", Op: OpGt, Value: "3"}, false},
		{"ge", Constraint{Attribute: "cores", Op: OpGe, Value: "3"}, false},
		{"in", Constraint{Attribute: "rack", Op: OpIn, Values: []string{"a"}}, false},
		{"not_in", Constraint{Attribute: "rack", Op: OpNotIn, Values: []string{"a"}}, false},
		{"exists", Constraint{Attribute: "gpu", Op: OpExists}, false},
		{"not_exists", Constraint{Attribute: "gpu", Op: OpNotExists}, false},
		{"regex", Constraint{Attribute: "rack", Op: OpRegex, Value: "^r[0-9]+$"}, false},
		{"unique", Constraint{Attribute: "rack", Op: OpUnique}, false},
		{"same", Constraint{Attribute: "rack", Op: OpSame}, false},
		{"max_per", Constraint{Attribute: "rack", Op: OpMaxPer, N: 3}, false},
		{"no attribute", Constraint{Op: OpEq, Value: "x"}, true},
		{"unknown op", Constraint{Attribute: "rack", Op: "like"}, true},
		{"empty op", Constraint{Attribute: "rack"}, true},
		{"in without values", Constraint{Attribute: "rack", Op: OpIn}, true},
		{"not_in without values", Constraint{Attribute: "rack", Op: OpNotIn}, true},
		{"bad regex", Constraint{Attribute: "rack", Op: OpRegex, Value: "("}, true},
		{"max_per zero", Constraint{Attribute: "rack", Op: OpMaxPer}, true},
		{"max_per negative", Constraint{Attribute: "rack", Op: OpMaxPer, N: -1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.c.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("got %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidConstraint) {
				t.Errorf("got %v, want it to wrap %v", err, ErrInvalidConstraint)
			}
		})
	}
}

func TestConstraint_String(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c    Constraint
		want string
	}{
		{Constraint{Attribute: "rack", Op: OpIn, Values: []string{"r1", "r2"}, Soft: true}, "rack in [r1 r2] (soft)"},
		{Constraint{Attribute: "kernel", Op: OpGe, Value: "5.15"}, `kernel >= "5.15"`},
		{Constraint{Attribute: "gpu", Op: OpExists}, "gpu exists"},
		{Constraint{Attribute: "rack", Op: OpMaxPer, N: 2}, "rack max_per 2"},
	}
	for _, tc := range tests {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// TestDotted_admitsEveryVersion: compare parses text as versions only
// when dotted says it may be one, so dotted must admit every string
// parseVersion reads, signs included ("+1" equals "1" as versions).
func TestDotted_admitsEveryVersion(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "1", "1.2", "1..2", ".1", "1.", "+1", "-0", "-1", "+-1", "1.+2", "2.-0",
		"A100", "6.1.0", "1_0", "99999999999999999999", "1.2a", "--1", " 1", "1 "} {
		if _, ok := parseVersion(s); ok && !dotted(s) {
			t.Errorf("%q: parseVersion reads it, dotted refuses it", s)
		}
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{{"+1", "1", 0}, {"6.1", "6.1.0", 0}, {"10", "9", 1}, {"A100", "A100", 0}, {"A100", "V100", -1}, {"1.2a", "1.2", 1}} {
		if got := compare(Text(tc.a), tc.b); got != tc.want {
			t.Errorf("compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
