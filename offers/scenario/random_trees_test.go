package scenario

import (
	"fmt"
	"math/rand/v2"
)

// Random trees.

type genOpts struct {
	unit           bool // demand components in {0,1} instead of {0..3}
	equalWeights   bool
	minCap, maxCap int64
	maxDepth       int // 1..3
	agents         int
}

// randomSpec draws a tree: depth 1..maxDepth, fan-out 2-3, 2-3 resources,
// demand components in {0..3} (or {0,1}) with one positive at least,
// weights in {1,2,3}, capacities in [minCap, maxCap].
func randomSpec(rng *rand.Rand, o genOpts) Spec {
	m := 2 + rng.IntN(2)
	names := []string{"cpus", "gpus", "mem"}[:m]
	capacity := res{}
	for _, n := range names {
		capacity[n] = o.minCap + rng.Int64N(o.maxCap-o.minCap+1)
	}
	depth := 1 + rng.IntN(max(1, o.maxDepth))
	hi := 4
	if o.unit {
		hi = 2
	}
	weight := func() float64 {
		if o.equalWeights {
			return 1
		}
		return float64(1 + rng.IntN(3))
	}
	var gen func(name string, level int) []Node
	gen = func(name string, level int) []Node {
		fan := 2 + rng.IntN(2)
		var out []Node
		for i := 1; i <= fan; i++ {
			cname := fmt.Sprintf("%s%d", name, i)
			if level < depth && (i == 1 || rng.IntN(2) == 0) {
				out = append(out, grp(cname, weight(), gen(cname+".", level+1)...))
				continue
			}
			d := res{}
			for len(d) == 0 {
				for _, rn := range names {
					if x := int64(rng.IntN(hi)); x > 0 {
						d[rn] = x
					}
				}
			}
			out = append(out, lfw(cname, weight(), d))
		}
		return out
	}
	s := tree(capacity, gen("n", 1)...)
	s.Agents = o.agents
	return s
}

func isUnit(s Spec) bool {
	for _, l := range leafNodes(s) {
		for _, x := range l.Demand {
			if x > 1 {
				return false
			}
		}
	}
	return true
}
