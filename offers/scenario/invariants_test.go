package scenario

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/allot-project/allot/offers"
)

// Invariants: capacity and Pareto efficiency (P5), checked against the
// spec's own numbers, independently of the allocator's bookkeeping.

// agentTotals splits the capacity as Spec.Agents does.
func agentTotals(s Spec) map[string]res {
	k := int64(max(1, s.Agents))
	out := map[string]res{}
	for i := int64(0); i < k; i++ {
		tot := res{}
		for n, v := range s.Capacity {
			part := v / k
			if i < v%k {
				part++
			}
			tot[n] = part
		}
		out["agent-"+strconv.FormatInt(i, 10)] = tot
	}
	return out
}

// agentFree returns every agent's free resources, from the spec totals minus
// the demands of the tasks the run holds there.
func agentFree(s Spec, r *Run) map[string]res {
	demand := map[string]res{}
	for _, l := range leafNodes(s) {
		demand[l.Name] = l.Demand
	}
	free := agentTotals(s)
	for _, rt := range r.running {
		f, ok := free[string(rt.agent)]
		if !ok {
			free[string(rt.agent)] = res{}
			f = free[string(rt.agent)]
		}
		for n, x := range demand[rt.leaf] {
			f[n] -= x
		}
	}
	return free
}

func fitsIn(d, free res) bool {
	for n, x := range d {
		if x > free[n] {
			return false
		}
	}
	return true
}

// checkInvariants asserts, after a fill: no agent over capacity (by the
// tasks it runs and by the allocator's own tree shares), no outstanding
// offer, and P5: no leaf with pending tasks has a task that fits any agent's
// free resources. launched counts every task a leaf ever launched (for
// leaves with a bounded number of tasks); nil means all unlimited.
func checkInvariants(t testing.TB, label string, s Spec, r *Run, launched map[string]int64) bool {
	t.Helper()
	ok := true
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: "+format, append([]any{label}, args...)...)
		ok = false
	}
	if out := r.Alloc.Outstanding(); len(out) != 0 {
		fail("%d offers outstanding after Fill", len(out))
	}
	free := agentFree(s, r)
	totals := agentTotals(s)
	for id, f := range free {
		if _, known := totals[id]; !known {
			fail("task on unknown agent %s", id)
		}
		for n, x := range f {
			if x < 0 {
				fail("agent %s over capacity on %s by %d", id, n, -x)
			}
		}
	}
	for _, ns := range r.Alloc.Shares() {
		if ns.Path == "" {
			for n, x := range ns.Allocation.Scalars {
				if x > s.Capacity[n] {
					fail("root allocation %s=%d exceeds capacity %d", n, x, s.Capacity[n])
				}
			}
		}
		for n, v := range ns.Shares {
			if v > 1+1e-12 {
				fail("node %q share of %s is %v > 1", ns.Path, n, v)
			}
		}
	}
	for _, l := range leafNodes(s) {
		if got := r.Tasks(l.Name); got < 0 {
			fail("leaf %s runs %d tasks", l.Name, got)
		}
		if l.Tasks != offers.Unlimited {
			n := r.Tasks(l.Name)
			if launched != nil {
				n = launched[l.Name]
			}
			if n > l.Tasks {
				fail("leaf %s launched %d tasks of %d", l.Name, n, l.Tasks)
			}
			if n >= l.Tasks {
				continue
			}
		}
		for id, f := range free {
			if fitsIn(l.Demand, f) {
				fail("P5: leaf %s has pending tasks and %v fits agent %s's free %v (counts %s)",
					l.Name, l.Demand, id, f, r.Counts())
			}
		}
	}
	return ok
}

// churnChecked completes n random running tasks (seeded), refilling and
// checking the invariants after each; it returns the launches per leaf.
func churnChecked(t testing.TB, label string, s Spec, r *Run, n int, seed uint64) map[string]int64 {
	t.Helper()
	launched := map[string]int64{}
	for _, l := range r.Leaves() {
		launched[l] = r.Tasks(l)
	}
	rng := newRNG(seed)
	for i := 0; i < n; i++ {
		if completeWhere(t, r, rng, nil) == "" {
			break
		}
		before := map[string]int64{}
		for _, l := range r.Leaves() {
			before[l] = r.Tasks(l)
		}
		if _, err := r.Fill(); err != nil {
			t.Fatalf("%s: Fill: %v", label, err)
		}
		for _, l := range r.Leaves() {
			launched[l] += r.Tasks(l) - before[l]
		}
		if !checkInvariants(t, fmt.Sprintf("%s after completion %d", label, i+1), s, r, launched) {
			return launched
		}
	}
	return launched
}

// dominant returns a leaf's dominant share.
func dominant(r *Run, leaf string) float64 {
	d := 0.0
	for _, v := range r.Shares(leaf) {
		d = math.Max(d, v)
	}
	return d
}
