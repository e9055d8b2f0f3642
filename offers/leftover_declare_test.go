package offers

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// TestAllocator_Declare splits a declaration into fair and optional
// demand: fair = max(Demand − Optional, MustStart) per shape.
func TestAllocator_Declare(t *testing.T) {
	a1, a2, a3 := Demand{Resources: cpus(100)}, Demand{Resources: cpus(200)}, Demand{Resources: cpus(300)}
	n := func(d Demand, c int64) Demand { d.Count = c; return d }
	tests := []struct {
		name          string
		d             Declaration
		fair, spare   map[string]int64
		declared      bool
		wantOptionals int
	}{
		{"demand only", Declaration{Demand: []Demand{n(a1, 3)}},
			map[string]int64{"cpus:100": 3}, map[string]int64{}, true, 0},
		{"altruistic: demand = must-start + optional",
			Declaration{Demand: []Demand{n(a1, 3), n(a2, 2)}, MustStart: []Demand{n(a1, 1)}, Optional: []Demand{n(a1, 2), n(a2, 2)}},
			map[string]int64{"cpus:100": 1, "cpus:200": 0}, map[string]int64{"cpus:100": 2, "cpus:200": 2}, true, 2},
		{"must-start and optional without demand",
			Declaration{MustStart: []Demand{n(a1, 1)}, Optional: []Demand{n(a2, 2)}},
			map[string]int64{"cpus:100": 1}, map[string]int64{"cpus:200": 2}, true, 1},
		{"shapes listed twice add up",
			Declaration{Demand: []Demand{n(a3, 1), n(a3, 2)}, Optional: []Demand{n(a3, 1), n(a3, 1)}},
			map[string]int64{"cpus:300": 1}, map[string]int64{"cpus:300": 2}, true, 1},
		{"unlimited demand less optional stays unlimited",
			Declaration{Demand: []Demand{n(a1, Unlimited)}, Optional: []Demand{n(a1, 5)}},
			map[string]int64{"cpus:100": Unlimited}, map[string]int64{"cpus:100": 5}, true, 1},
		{"unlimited optional leaves the must-start set",
			Declaration{Demand: []Demand{n(a1, 4)}, MustStart: []Demand{n(a1, 1)}, Optional: []Demand{n(a1, Unlimited)}},
			map[string]int64{"cpus:100": 1}, map[string]int64{"cpus:100": Unlimited}, true, 1},
		{"optional only", Declaration{Optional: []Demand{n(a2, 1)}},
			map[string]int64{}, map[string]int64{"cpus:200": 1}, true, 1},
		{"nothing: undeclared", Declaration{}, map[string]int64{}, map[string]int64{}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAlloc(t, DefaultConfig())
			addFw(t, a, "F", "")
			declare(t, a, "F", Declaration{Optional: []Demand{n(a3, 9)}, RemainingWork: 7})
			declare(t, a, "F", tc.d)
			f := a.frameworks["F"]
			counts := func(ss []*shape) map[string]int64 {
				out := map[string]int64{}
				for _, s := range ss {
					out[a.reg.toResources(s.res).String()] = s.count
				}
				return out
			}
			if got := counts(f.shapes); !reflect.DeepEqual(got, tc.fair) {
				t.Errorf("fair: got %v, want %v", got, tc.fair)
			}
			if got := counts(f.optional); !reflect.DeepEqual(got, tc.spare) {
				t.Errorf("optional: got %v, want %v", got, tc.spare)
			}
			if f.declared != tc.declared || len(a.leftover.spare) != min(1, tc.wantOptionals) {
				t.Errorf("declared %v with %d leftover frameworks; want %v, %d", f.declared, len(a.leftover.spare), tc.declared, min(1, tc.wantOptionals))
			}
		})
	}
}

func TestAllocator_Declare_errors(t *testing.T) {
	a := newAlloc(t, DefaultConfig())
	addAgent(t, a, "m1", cpus(1000), nil)
	addFw(t, a, "F", "")
	declare(t, a, "F", Declaration{MustStart: []Demand{{Resources: cpus(100), Count: 1}},
		Optional: []Demand{{Resources: cpus(200), Count: 1}}, RemainingWork: 2})
	a.Allocate(t0)
	before := snap(a)
	ok := []Demand{{Resources: cpus(100), Count: 1}}
	bad := []Demand{{Resources: cpus(100), Count: -1}}
	for name, err := range map[string]error{
		"bad optional":      a.Declare("F", Declaration{Demand: ok, Optional: bad}),
		"bad must-start":    a.Declare("F", Declaration{Demand: ok, MustStart: bad}),
		"negative work":     a.Declare("F", Declaration{Demand: ok, RemainingWork: -1}),
		"NaN work":          a.Declare("F", Declaration{Demand: ok, RemainingWork: math.NaN()}),
		"infinite work":     a.SetLeftoverDemand("F", ok, math.Inf(1)),
		"bad leftover":      a.SetLeftoverDemand("F", bad, 1),
		"empty optional":    a.SetLeftoverDemand("F", []Demand{{Count: 1}}, 1),
		"unknown framework": a.Declare("G", Declaration{Demand: ok}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		sameState(t, name, before, a)
	}
	if err := a.Declare("G", Declaration{}); !errors.Is(err, ErrUnknownFramework) {
		t.Errorf("empty declaration of an unknown framework: %v", err)
	}
}

func TestConfig_Validate_leftover(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"unknown order":   func(c *Config) { c.LeftoverOrder = "fifo" },
		"negative weight": func(c *Config) { c.LeftoverWorkWeight = -1 },
		"NaN weight":      func(c *Config) { c.LeftoverWorkWeight = math.NaN() },
		"infinite weight": func(c *Config) { c.LeftoverWorkWeight = math.Inf(1) },
	} {
		cfg := DefaultConfig()
		mod(&cfg)
		if _, err := New(cfg); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: New = %v, want ErrInvalid", name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.LeftoverOrder = ""
	a := newAlloc(t, cfg)
	if a.cfg.LeftoverOrder != LeftoverJCTFirst {
		t.Errorf("default order %q, want %q", a.cfg.LeftoverOrder, LeftoverJCTFirst)
	}
	for _, o := range LeftoverOrders() {
		if got, err := ParseLeftoverOrder(string(o)); err != nil || got != o {
			t.Errorf("ParseLeftoverOrder(%q) = %q, %v", o, got, err)
		}
	}
}
