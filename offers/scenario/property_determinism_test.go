package scenario

// Property tests of docs/hdrf.md on random trees, bounded as those of
// property_test.go: the same inputs give the same allocation, on one agent
// or many, and the fuzzer explores the trees.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/allot-project/allot/offers"
)

// TestP14_Determinism: two runs of the same scenario and churn seed give
// identical task counts and identical shares, bit for bit, under every
// policy (resource registration order differs between runs because it
// follows map iteration).
func TestP14_Determinism(t *testing.T) {
	for seed := uint64(0); seed < propTreesP14; seed++ {
		s := randomSpec(newRNG(5000+seed), genOpts{minCap: 60, maxCap: 120, maxDepth: 3, agents: 3})
		for _, p := range offers.Policies() {
			n := 100
			if p == offers.PolicyStatic {
				n = propStaticStep
			}
			trace := func() string {
				r := mustRun(t, s, p)
				var b strings.Builder
				b.WriteString(r.Counts() + "\n" + fingerprint(r))
				mustChurn(t, r, n, seed)
				b.WriteString(r.Counts() + "\n" + fingerprint(r))
				return b.String()
			}
			if a, b := trace(), trace(); a != b {
				t.Errorf("seed %d %s: runs differ:\n%s\n--- vs ---\n%s", seed, p, a, b)
			}
		}
	}
}

// fingerprint renders every node's policy share (exact bits) and plain-sum
// allocation.
func fingerprint(r *Run) string {
	var b strings.Builder
	for _, ns := range r.Alloc.Shares() {
		fmt.Fprintf(&b, "%s %x %v %v\n", ns.Path, ns.DominantShare, ns.Allocation.Scalars, ns.Demanding)
	}
	return b.String()
}

// TestP15_MultiAgent: 10 agents of <3,3> with unit tasks reach the same
// steady states as the single pool of <30,30> (within 1 task per leaf) on
// Figure 4, Figure 5 and T-DOVE.
func TestP15_MultiAgent(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		ps   []offers.Policy
	}{
		{"figure4", fig4R(30), hdrf},
		{"figure5", fig5R(30), hdrf},
		{"t-dove", tDove(), []offers.Policy{offers.PolicyStatic, offers.PolicyDynamic}},
	}
	for _, c := range cases {
		for _, p := range c.ps {
			t.Run(c.name+"/"+string(p), func(t *testing.T) {
				n := churnN
				if p == offers.PolicyStatic {
					n = churnStaticN
				}
				single := mustRun(t, c.spec, p)
				mustChurn(t, single, n, churnSeed)
				multiSpec := c.spec
				multiSpec.Agents = 10
				multi := mustRun(t, multiSpec, p)
				checkInvariants(t, "multi fill", multiSpec, multi, nil)
				mustChurn(t, multi, n, churnSeed)
				checkInvariants(t, "multi churn", multiSpec, multi, nil)
				if d := maxDiff(counts(multi), counts(single)); d > 1 {
					t.Errorf("10 agents got %s, single pool %s: off by %d > 1 (leaves %v)",
						fmtCounts(counts(multi)), fmtCounts(counts(single)), d, leafNames(c.spec))
				}
				if w := oracleCounts(c.spec); maxDiff(counts(multi), w) > 1 {
					t.Errorf("10 agents got %s, static %s", fmtCounts(counts(multi)), fmtCounts(w))
				}
			})
		}
	}
}

// fuzzTree derives a small scenario from fuzz bytes: policy, 1-3
// resources, 1-4 agents, capacities 1-48, depth <= 3, fan-out 1-3, demands
// 0-3 per resource (one positive at least), weights 1-3, a few bounded
// leaves, and a churn length and seed.
func fuzzTree(data []byte) (Spec, offers.Policy, int, uint64) {
	i := 0
	next := func() int {
		if i >= len(data) {
			i++
			return 0
		}
		b := int(data[i])
		i++
		return b
	}
	p := offers.Policies()[next()%len(offers.Policies())]
	m := 1 + next()%3
	names := []string{"cpus", "gpus", "mem"}[:m]
	agents := 1 + next()%4
	capacity := res{}
	for _, n := range names {
		capacity[n] = int64(1 + next()%48)
	}
	leaves := 0
	var gen func(prefix string, level int) []Node
	gen = func(prefix string, level int) []Node {
		fan := 1 + next()%3
		var out []Node
		for k := 1; k <= fan; k++ {
			name := fmt.Sprintf("%s%d", prefix, k)
			b := next()
			w := float64(1 + b%3)
			if level < 3 && b&4 != 0 && leaves < 20 {
				out = append(out, grp(name, w, gen(name+".", level+1)...))
				continue
			}
			d := res{}
			for j, rn := range names {
				if x := int64(next() % 4); x > 0 {
					d[rn] = x
				} else if j == len(names)-1 && len(d) == 0 {
					d[rn] = 1
				}
			}
			n := lfw(name, w, d)
			if b&8 != 0 {
				n.Tasks = int64(b >> 4)
			}
			leaves++
			out = append(out, n)
		}
		return out
	}
	s := tree(capacity, gen("n", 1)...)
	s.Agents = agents
	churn := next() % 48
	seed := uint64(next())<<8 | uint64(next())
	return s, p, churn, seed
}

func FuzzScenario(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 10, 10, 4, 5, 1, 0, 1, 2, 1, 0, 1, 20, 7, 7})
	f.Add([]byte{1, 2, 3, 30, 20, 40, 7, 4, 2, 3, 1, 12, 3, 0, 2, 9, 1, 2, 3, 40, 1, 1})
	f.Add([]byte{2, 1, 2, 30, 30, 2, 4, 1, 0, 5, 0, 1, 6, 1, 1, 40, 3, 3})
	f.Add([]byte{3, 2, 1, 6, 6, 6, 3, 12, 1, 2, 3, 24, 3, 2, 1, 200, 0, 1, 47, 5, 5})
	f.Add([]byte{4, 0, 0, 48, 2, 6, 1, 1, 6, 2, 0, 30, 8, 8})
	f.Add([]byte{5, 2, 3, 13, 17, 19, 6, 5, 1, 1, 1, 5, 2, 2, 2, 0, 3, 3, 3, 44, 4, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256 {
			return
		}
		s, p, churn, seed := fuzzTree(data)
		r, err := New(s, p)
		if err != nil {
			t.Fatalf("New(%s): %v (spec %+v)", p, err, s)
		}
		if _, err := r.Fill(); err != nil {
			t.Fatalf("Fill(%s): %v", p, err)
		}
		label := fmt.Sprintf("%s leaves %v", p, leafNames(s))
		if checkInvariants(t, label+" fill", s, r, nil) {
			churnChecked(t, label, s, r, churn, seed)
		}
	})
}
