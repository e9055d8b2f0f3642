package protocol

import (
	"math"
	"reflect"
	"testing"
)

const maxU = math.MaxUint64

func rs(pairs ...uint64) Ranges {
	var out Ranges
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Range{Begin: pairs[i], End: pairs[i+1]})
	}
	return out
}

func TestRanges_Normalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Ranges
		want Ranges
	}{
		{"nil", nil, nil},
		{"empty", Ranges{}, nil},
		{"single", rs(5, 9), rs(5, 9)},
		{"unsorted", rs(20, 30, 1, 5), rs(1, 5, 20, 30)},
		{"adjacent merge", rs(1, 5, 6, 10), rs(1, 10)},
		{"gap of one stays", rs(1, 5, 7, 10), rs(1, 5, 7, 10)},
		{"overlap", rs(1, 10, 5, 15), rs(1, 15)},
		{"contained", rs(1, 100, 5, 15), rs(1, 100)},
		{"duplicate", rs(3, 3, 3, 3), rs(3, 3)},
		{"inverted dropped", rs(10, 5, 1, 2), rs(1, 2)},
		{"max end then more", rs(maxU-5, maxU, maxU-2, maxU-1), rs(maxU-5, maxU)},
		{"max end absorbs", rs(0, maxU, 7, 9), rs(0, maxU)},
		{"adjacent at max", rs(maxU-1, maxU-1, maxU, maxU), rs(maxU-1, maxU)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.in.Normalize(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRanges_Count(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Ranges
		want uint64
	}{
		{"empty", nil, 0},
		{"one", rs(7, 7), 1},
		{"two", rs(1, 10, 20, 29), 20},
		{"inverted is empty", rs(10, 1), 0},
		{"top", rs(maxU, maxU), 1},
		{"full saturates", rs(0, maxU), maxU},
		{"sum saturates", rs(0, maxU-1, maxU, maxU), maxU},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.in.Count(); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestRanges_Union(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b Ranges
		want Ranges
	}{
		{"both empty", nil, nil, nil},
		{"one empty", rs(1, 2), nil, rs(1, 2)},
		{"disjoint", rs(1, 2), rs(5, 6), rs(1, 2, 5, 6)},
		{"adjacent", rs(1, 4), rs(5, 6), rs(1, 6)},
		{"overlapping", rs(1, 5), rs(3, 9), rs(1, 9)},
		{"max", rs(0, 10), rs(11, maxU), rs(0, maxU)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.a.Union(tc.b); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if got := tc.b.Union(tc.a); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("reversed: got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRanges_Minus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b Ranges
		want Ranges
	}{
		{"empty minus", nil, rs(1, 2), nil},
		{"minus empty", rs(1, 2), nil, rs(1, 2)},
		{"disjoint", rs(1, 5), rs(7, 9), rs(1, 5)},
		{"middle hole", rs(1, 10), rs(4, 6), rs(1, 3, 7, 10)},
		{"left edge", rs(1, 10), rs(0, 3), rs(4, 10)},
		{"right edge", rs(1, 10), rs(8, 20), rs(1, 7)},
		{"exact", rs(1, 10), rs(1, 10), nil},
		{"superset", rs(3, 4), rs(1, 10), nil},
		{"several holes", rs(1, 20), rs(2, 2, 5, 6, 19, 25), rs(1, 1, 3, 4, 7, 18)},
		{"one hole spans two", rs(1, 5, 8, 12), rs(4, 9), rs(1, 3, 10, 12)},
		{"adjacent not removed", rs(5, 10), rs(1, 4, 11, 12), rs(5, 10)},
		{"zero begin", rs(0, 5), rs(0, 0), rs(1, 5)},
		{"max end kept", rs(maxU-3, maxU), rs(maxU-2, maxU-2), rs(maxU-3, maxU-3, maxU-1, maxU)},
		{"max end removed", rs(0, maxU), rs(10, maxU), rs(0, 9)},
		{"full minus full", rs(0, maxU), rs(0, maxU), nil},
		{"unsorted inputs", rs(10, 20, 1, 5), rs(15, 30, 2, 2), rs(1, 1, 3, 5, 10, 14)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.a.Minus(tc.b); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRanges_ContainsAll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b Ranges
		want bool
	}{
		{"empty contains empty", nil, nil, true},
		{"anything contains empty", rs(1, 2), nil, true},
		{"empty contains nothing", nil, rs(1, 1), false},
		{"subset", rs(1, 10), rs(2, 3, 9, 10), true},
		{"straddles gap", rs(1, 5, 7, 10), rs(4, 8), false},
		{"across adjacent pieces", rs(1, 5, 6, 10), rs(4, 8), true},
		{"max", rs(0, maxU), rs(maxU, maxU, 0, 0), true},
		{"just outside", rs(1, 10), rs(11, 11), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.a.ContainsAll(tc.b); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRanges_Take(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     Ranges
		n      uint64
		want   Ranges
		wantOK bool
	}{
		{"zero", rs(1, 5), 0, nil, true},
		{"zero of empty", nil, 0, nil, true},
		{"from empty", nil, 1, nil, false},
		{"within first", rs(10, 20), 3, rs(10, 12), true},
		{"exactly all", rs(1, 2, 5, 6), 4, rs(1, 2, 5, 6), true},
		{"spans pieces", rs(5, 6, 1, 2), 3, rs(1, 2, 5, 5), true},
		{"too many", rs(1, 2, 5, 6), 5, nil, false},
		{"full range", rs(0, maxU), 3, rs(0, 2), true},
		{"full range max", rs(0, maxU), maxU, rs(0, maxU-1), true},
		{"top", rs(maxU-1, maxU), 2, rs(maxU-1, maxU), true},
		{"merges overlaps first", rs(1, 5, 3, 7), 7, rs(1, 7), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := tc.in.Take(tc.n)
			if ok != tc.wantOK || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestRanges_ValidateAndString(t *testing.T) {
	t.Parallel()
	if err := rs(1, 2, 5, 5).Validate(); err != nil {
		t.Errorf("valid: got %v, want nil", err)
	}
	if err := rs(5, 4).Validate(); err == nil {
		t.Errorf("inverted: got nil, want error")
	}
	if got, want := rs(1, 2, 5, 5).String(), "[1-2,5-5]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
