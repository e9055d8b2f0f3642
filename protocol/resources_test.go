package protocol

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func res(scalars map[string]int64, ranges map[string]Ranges) Resources {
	return Resources{Scalars: scalars, Ranges: ranges}
}

func TestResources_Add(t *testing.T) {
	t.Parallel()
	a := res(map[string]int64{ResCPUs: 1000, ResMem: 512}, map[string]Ranges{ResPorts: rs(1, 5)})
	b := res(map[string]int64{ResCPUs: 500, ResGPUs: 1, ResDisk: 0}, map[string]Ranges{ResPorts: rs(6, 8, 20, 20)})
	got := a.Add(b)
	want := res(map[string]int64{ResCPUs: 1500, ResMem: 512, ResGPUs: 1}, map[string]Ranges{ResPorts: rs(1, 8, 20, 20)})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if a.Scalar(ResCPUs) != 1000 || len(a.Ranges[ResPorts]) != 1 {
		t.Errorf("Add mutated its receiver: %v", a)
	}
	if got := (Resources{}).Add(Resources{}); !got.IsEmpty() || got.Scalars != nil {
		t.Errorf("empty+empty: got %#v, want zero", got)
	}
}

func TestResources_Sub(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		a, b    Resources
		want    Resources
		wantNeg bool
	}{
		{"exact to empty", res(map[string]int64{ResCPUs: 1000}, map[string]Ranges{ResPorts: rs(1, 2)}),
			res(map[string]int64{ResCPUs: 1000}, map[string]Ranges{ResPorts: rs(1, 2)}),
			res(map[string]int64{}, map[string]Ranges{}), false},
		{"partial", res(map[string]int64{ResCPUs: 1000, ResMem: 100}, map[string]Ranges{ResPorts: rs(1, 10)}),
			res(map[string]int64{ResCPUs: 250}, map[string]Ranges{ResPorts: rs(3, 4)}),
			res(map[string]int64{ResCPUs: 750, ResMem: 100}, map[string]Ranges{ResPorts: rs(1, 2, 5, 10)}), false},
		{"goes negative", res(map[string]int64{ResCPUs: 100}, nil),
			res(map[string]int64{ResCPUs: 300}, nil),
			res(map[string]int64{ResCPUs: -200}, nil), true},
		{"missing range ignored", res(nil, nil), res(nil, map[string]Ranges{ResPorts: rs(1, 2)}), res(nil, nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.a.Sub(tc.b)
			if !got.Equal(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if neg := got.Validate() != nil; neg != tc.wantNeg {
				t.Errorf("negative: got %v, want %v", neg, tc.wantNeg)
			}
		})
	}
}

func TestResources_Contains(t *testing.T) {
	t.Parallel()
	big := res(map[string]int64{ResCPUs: 4000, ResMem: 8192}, map[string]Ranges{ResPorts: rs(31000, 31999)})
	tests := []struct {
		name string
		o    Resources
		want bool
	}{
		{"empty", Resources{}, true},
		{"equal", big, true},
		{"smaller", res(map[string]int64{ResCPUs: 1}, map[string]Ranges{ResPorts: rs(31000, 31000)}), true},
		{"zero of absent", res(map[string]int64{ResGPUs: 0}, nil), true},
		{"absent scalar", res(map[string]int64{ResGPUs: 1}, nil), false},
		{"too much", res(map[string]int64{ResMem: 8193}, nil), false},
		{"port outside", res(nil, map[string]Ranges{ResPorts: rs(32000, 32000)}), false},
		{"absent range", res(nil, map[string]Ranges{"vlans": rs(1, 1)}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := big.Contains(tc.o); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResources_Equal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b Resources
		want bool
	}{
		{"zero vs absent", res(map[string]int64{ResCPUs: 0}, nil), Resources{}, true},
		{"empty range vs absent", res(nil, map[string]Ranges{ResPorts: {}}), Resources{}, true},
		{"unnormalized ranges", res(nil, map[string]Ranges{ResPorts: rs(5, 6, 1, 4)}), res(nil, map[string]Ranges{ResPorts: rs(1, 6)}), true},
		{"different", res(map[string]int64{ResCPUs: 1}, nil), res(map[string]int64{ResCPUs: 2}, nil), false},
		{"negative vs absent", res(map[string]int64{ResCPUs: -1}, nil), Resources{}, false},
		{"negative vs zero", res(map[string]int64{ResCPUs: -1}, nil), res(map[string]int64{ResCPUs: 0}, nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.a.Equal(tc.b); got != tc.want {
				t.Errorf("a.Equal(b): got %v, want %v", got, tc.want)
			}
			if got := tc.b.Equal(tc.a); got != tc.want {
				t.Errorf("b.Equal(a): got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResources_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		r       Resources
		wantErr bool
	}{
		{"empty", Resources{}, false},
		{"good", sampleResources(), false},
		{"custom name", res(map[string]int64{"fpga.x-1_y": 2}, nil), false},
		{"negative", res(map[string]int64{ResCPUs: -1}, nil), true},
		{"bad name", res(map[string]int64{"CPUs": 1}, nil), true},
		{"empty name", res(map[string]int64{"": 1}, nil), true},
		{"bad range name", res(nil, map[string]Ranges{"9ports": rs(1, 2)}), true},
		{"inverted range", res(nil, map[string]Ranges{ResPorts: rs(5, 4)}), true},
		{"scalar and range", res(map[string]int64{ResPorts: 1}, map[string]Ranges{ResPorts: rs(1, 2)}), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.r.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("got %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidResources) {
				t.Errorf("got %v, want it to wrap %v", err, ErrInvalidResources)
			}
		})
	}
}

func TestResources_StringNamesIsEmpty(t *testing.T) {
	t.Parallel()
	r := res(map[string]int64{ResMem: 512, ResCPUs: 1000, ResGPUs: 0}, map[string]Ranges{ResPorts: rs(31000, 31001)})
	if got, want := r.String(), "cpus:1000;mem:512;ports:[31000-31001]"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	if got, want := r.Names(), []string{"cpus", "mem", "ports"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names: got %v, want %v", got, want)
	}
	if r.IsEmpty() {
		t.Errorf("IsEmpty: got true, want false")
	}
	if !res(map[string]int64{ResCPUs: 0}, map[string]Ranges{ResPorts: nil}).IsEmpty() {
		t.Errorf("IsEmpty(zeros): got false, want true")
	}
	c := r.Clone()
	c.Scalars[ResCPUs] = 1
	c.Ranges[ResPorts][0].Begin = 1
	if r.Scalar(ResCPUs) != 1000 || r.Ranges[ResPorts][0].Begin != 31000 {
		t.Errorf("Clone shares memory with the original")
	}
}

// ValidResourceName by hand accepts exactly what its rule as a regular
// expression does, on names built from the edges of each class.
func TestValidResourceName_matchesRule(t *testing.T) {
	rule := regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,62}$`)
	alphabet := []byte("az09_.-AZ/ \x00\xff`{@[")
	var names []string
	for _, c := range alphabet {
		for _, d := range alphabet {
			names = append(names, string([]byte{c}), string([]byte{c, d}), "a"+string([]byte{c, d}))
		}
	}
	for _, n := range []int{62, 63, 64} {
		names = append(names, "a"+strings.Repeat("b", n-1), "a"+strings.Repeat("b", n))
	}
	names = append(names, "", "gpu.0", "cpus", "mem", "Cpus", "9gpu", "é")
	for _, name := range names {
		if got, want := ValidResourceName(name), rule.MatchString(name); got != want {
			t.Errorf("ValidResourceName(%q) = %v, the rule says %v", name, got, want)
		}
	}
}
