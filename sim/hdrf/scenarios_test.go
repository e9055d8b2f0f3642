package hdrf

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestScenarioFiles replays every scenario in examples/scenarios under every
// policy and checks the tables of docs/hdrf.md (tasks per leaf, leaves in
// file order). The H-DRF policies' counts are the paper's figures, which
// the static oracle reproduces (offers/scenario); the baselines' are
// worked out by baselineOracle from the policies' definitions, replaying
// the same churn with another random stream.
func TestScenarioFiles(t *testing.T) {
	t.Parallel()
	hdrf := map[string]string{
		"figure1": "60/80/20/20", "figure2": "240/48/96/96", "figure3": "20/20", "figure4": "5/5/10",
		"figure5": "10/10/10/15/15", "figure6": "12/18/6", "figure8": "160/200/20/20",
		"collapsed": "15/15/15", "blocked-only": "50/50/99", "t-dove": "20/10/15/15",
	}
	for name, counts := range hdrf {
		want := map[string]string{"static": counts, "dynamic": counts, "paper": counts}
		if name == "t-dove" {
			want["paper"] = "15/15/15/15" // the literal rule undercharges n2 (docs/hdrf.md)
		}
		sc := loadScenario(t, name)
		for _, policy := range []string{"naive", "collapsed", "mesos"} {
			o := newBaselineOracle(sc, policy)
			o.fill()
			if sc.Churn != nil {
				o.churn(sc.Churn.Completions, sc.Churn.Seed)
			}
			want[policy] = joinCounts(o.counts())
		}
		for policy, counts := range want {
			t.Run(name+"/"+policy, func(t *testing.T) {
				t.Parallel()
				res, err := Run(sc, policy)
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, leaf := range leafOrder(sc.Root) {
					got = append(got, res.Leaves[leaf].Tasks)
				}
				if g := joinCounts(got); g != counts {
					t.Errorf("got %s, want %s", g, counts)
				}
			})
		}
	}
}

// TestBaselineOracle_steadyUnderChurn: the baselines' counts after churn
// are steady states, the same whatever the random stream, so comparing
// the replay with an oracle that draws differently is exact. It also pins
// the starvation docs/hdrf.md shows: naive and mesos take n2,1 to nothing
// on figure 4, from the 5/5/10 of the first fill.
func TestBaselineOracle_steadyUnderChurn(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"figure1", "figure4", "figure5", "figure8", "blocked-only", "t-dove"} {
		sc := loadScenario(t, name)
		for _, policy := range []string{"naive", "collapsed", "mesos"} {
			var first string
			for seed := uint64(1); seed <= 3; seed++ {
				o := newBaselineOracle(sc, policy)
				o.fill()
				o.churn(sc.Churn.Completions, seed)
				if got := joinCounts(o.counts()); seed == 1 {
					first = got
				} else if got != first {
					t.Errorf("%s/%s: seed %d gives %s, seed 1 %s", name, policy, seed, got, first)
				}
			}
		}
	}
	for _, policy := range []string{"naive", "mesos"} {
		o := newBaselineOracle(loadScenario(t, "figure4"), policy)
		o.fill()
		if got := joinCounts(o.counts()); got != "5/5/10" {
			t.Errorf("figure4/%s first fill: %s, want 5/5/10", policy, got)
		}
		o.churn(2000, 1)
		if got := joinCounts(o.counts()); got != "10/0/10" {
			t.Errorf("figure4/%s after churn: %s, want 10/0/10", policy, got)
		}
	}
}

func loadScenario(t *testing.T, name string) Scenario {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "scenarios", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc, err := ParseScenario(f)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func joinCounts(counts []int64) string {
	var parts []string
	for _, c := range counts {
		parts = append(parts, strconv.FormatInt(c, 10))
	}
	return strings.Join(parts, "/")
}

func leafOrder(n Node) []string {
	if len(n.Children) == 0 {
		return []string{n.Name}
	}
	var out []string
	for _, c := range n.Children {
		out = append(out, leafOrder(c)...)
	}
	return out
}
