package main

import "testing"

func TestGCPercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag    int
		env     string
		want    int
		set, ok bool
	}{
		{0, "", masterGCPercent, true, true},
		{0, "200", 0, false, true}, // GOGC, which the runtime read, stays
		{0, "off", 0, false, true},
		{80, "200", 80, true, true}, // the flag wins
		{100, "", 100, true, true},
		{-1, "", 0, false, false},
	} {
		got, set, err := gcPercent(tc.flag, tc.env)
		if got != tc.want || set != tc.set || (err == nil) != tc.ok {
			t.Errorf("gcPercent(%d, %q) = %d, %v, %v; want %d, %v, ok %v", tc.flag, tc.env, got, set, err, tc.want, tc.set, tc.ok)
		}
	}
}
