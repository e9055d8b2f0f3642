package scenario

// The rows of the worked examples (examples_test.go, examples_tdove_test.go)
// and what runs and checks them.

import (
	"math"
	"testing"

	"github.com/allot-project/allot/offers"
)

const (
	churnN    = 2000
	churnSeed = 1
	// churnStaticN caps churn under the static policy, which recomputes the
	// whole static allocation on every completion (about 1-2 ms per event
	// at 1000 tasks under -race) and steers straight back to it anyway.
	churnStaticN = 200
)

// example is one row: a spec, the policies it applies to, how much churn,
// and the acceptable task counts per leaf in tree order (any one of them;
// several only where ties leave alternatives).
type example struct {
	name     string
	spec     Spec
	policies []offers.Policy
	churn    int
	want     [][]int64
}

func want(alts ...[]int64) [][]int64 { return alts }

func pols(ps ...offers.Policy) []offers.Policy { return ps }

var (
	static    = offers.PolicyStatic
	dynamic   = offers.PolicyDynamic
	paper     = offers.PolicyPaper
	naive     = offers.PolicyNaive
	collapsed = offers.PolicyCollapsed
)

func runExamples(t *testing.T, cases []example) {
	t.Helper()
	for _, c := range cases {
		for _, p := range c.policies {
			name := c.name + "/" + string(p)
			if c.churn > 0 {
				name += "/churn"
			}
			t.Run(name, func(t *testing.T) {
				var got []int64
				if p == oracle {
					got = oracleCounts(c.spec)
				} else {
					r := mustRun(t, c.spec, p)
					checkInvariants(t, "fill", c.spec, r, nil)
					if c.churn > 0 {
						n := c.churn
						if p == static {
							n = min(n, churnStaticN)
						}
						mustChurn(t, r, n, churnSeed)
						checkInvariants(t, "churn", c.spec, r, nil)
					}
					got = counts(r)
				}
				if !matchesAny(got, c.want) {
					t.Errorf("%s: got %s, want %s (leaves %v)", name, fmtCounts(got), fmtAlts(c.want), leafNames(c.spec))
				}
			})
		}
	}
}

func leafNames(s Spec) []string {
	var out []string
	for _, l := range leafNodes(s) {
		out = append(out, l.Name)
	}
	return out
}

// roleShare is the dominant share of a role's plain-sum allocation.
func roleShare(t *testing.T, r *Run, path string) float64 {
	t.Helper()
	for _, ns := range r.Alloc.Shares() {
		if ns.Path == path && !ns.Framework {
			d := 0.0
			for _, v := range ns.Shares {
				d = math.Max(d, v)
			}
			return d
		}
	}
	t.Fatalf("no role %q in Shares()", path)
	return 0
}

// policyShare is the dominant share the policy orders a node by.
func policyShare(t *testing.T, r *Run, path string) float64 {
	t.Helper()
	for _, ns := range r.Alloc.Shares() {
		if ns.Path == path {
			return ns.DominantShare
		}
	}
	t.Fatalf("no node %q in Shares()", path)
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
