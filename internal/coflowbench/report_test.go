package coflowbench

import (
	"errors"
	"testing"

	"github.com/allot-project/allot/sim/coflowsim"
)

func TestSpeedup(t *testing.T) {
	t.Parallel()
	base := map[string]float64{"a": 100, "b": 200, "c": 100}
	other := map[string]float64{"a": 100, "b": 600, "c": 50, "gone": 1}
	got := speedup(base, other)
	// Averages: 750 / 400; ratios 0.5, 1, 3: P50 1, P90 3.
	if want := [3]float64{750.0 / 400, 1, 3}; got != want {
		t.Fatalf("speedup %v, want %v", got, want)
	}
	if got := pct([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90); got != 9 {
		t.Fatalf("P90 of 1..10: %g, want 9", got)
	}
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	tr := &coflowsim.Trace{Ports: 2, Coflows: []coflowsim.TraceCoflow{{ID: "1"}}}
	good := Config{Trace: tr, Policies: []string{"philae"}, Egress: 1 << 20, Slots: 8}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Config){
		"no trace":    func(c *Config) { c.Trace = nil },
		"too many":    func(c *Config) { c.Trace = &coflowsim.Trace{Ports: 1000, Coflows: tr.Coflows} },
		"no policy":   func(c *Config) { c.Policies = nil },
		"no egress":   func(c *Config) { c.Egress = 0 },
		"bad ingress": func(c *Config) { c.Ingress = -1 },
		"no slots":    func(c *Config) { c.Slots = 0 },
	} {
		c := good
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}
