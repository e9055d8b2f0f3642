package coflowsim

import (
	"testing"
	"time"
)

// TestTestbedFabric: FB2010's first 150 coflows folded onto 8 ports,
// every flow into a receiving port of its own, run under every policy
// the testbed compares, with and without the rate caps. Dropping the caps
// changes nothing for the uncapped schedulers (philae, aalo) and changes
// fifo (its MADD rates become an order); sebf and fifo, whose MADD pass
// once indexed receivers it had not counted on such traces, complete.
func TestTestbedFabric(t *testing.T) {
	t.Parallel()
	tr := fb2010(t)
	tr.Coflows = tr.Coflows[:150]
	f, err := Fold(tr, 8, 1.43e-4, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	eo := EgressOnly(f)
	run := func(policy string, orderOnly bool) Result {
		t.Helper()
		cfg := DefaultConfig()
		cfg.Policy, cfg.OrderOnly = policy, orderOnly
		cfg.Coflow.Capacity, cfg.Coflow.Slot = 16<<20, 100*time.Millisecond
		res, err := Run(eo, cfg)
		if err != nil {
			t.Fatalf("%s (order only %v): %v", policy, orderOnly, err)
		}
		if len(res.Coflows) != len(eo.Coflows) {
			t.Fatalf("%s: %d coflows completed of %d", policy, len(res.Coflows), len(eo.Coflows))
		}
		return res
	}
	for _, p := range []string{"philae", "aalo"} {
		if a, b := run(p, false).AvgCCTms, run(p, true).AvgCCTms; a != b {
			t.Errorf("%s: average CCT %g with caps, %g without; it has none", p, a, b)
		}
	}
	if a, b := run("fifo", false).AvgCCTms, run("fifo", true).AvgCCTms; a == b {
		t.Errorf("fifo: average CCT %g both with and without its MADD caps", a)
	}
	run("sebf", false)
	run("fair", false)
}
