package sim

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestScenarioFiles replays every scenario in examples/scenarios under every
// policy and checks the tables of docs/hdrf.md (tasks per leaf, leaves in
// file order).
func TestScenarioFiles(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{
		"figure1": {"static": "60/80/20/20", "dynamic": "60/80/20/20", "paper": "60/80/20/20",
			"naive": "46/80/34/20", "collapsed": "51/76/25/24", "mesos": "46/80/34/20"},
		"figure2": {"static": "240/48/96/96", "dynamic": "240/48/96/96", "paper": "240/48/96/96",
			"naive": "240/48/96/96", "collapsed": "240/48/96/96", "mesos": "240/60/120/60"},
		"figure3": {"static": "20/20", "dynamic": "20/20", "paper": "20/20", "naive": "20/20",
			"collapsed": "20/20", "mesos": "20/20"},
		"figure4": {"static": "5/5/10", "dynamic": "5/5/10", "paper": "5/5/10", "naive": "10/0/10",
			"collapsed": "7/3/10", "mesos": "10/0/10"},
		"figure5": {"static": "10/10/10/15/15", "dynamic": "10/10/10/15/15", "paper": "10/10/10/15/15",
			"naive": "15/15/0/15/15", "collapsed": "12/12/6/10/20", "mesos": "15/15/0/15/15"},
		"figure6": {"static": "12/18/6", "dynamic": "12/18/6", "paper": "12/18/6", "naive": "12/18/6",
			"collapsed": "12/18/6", "mesos": "12/18/6"},
		"figure8": {"static": "160/200/20/20", "dynamic": "160/200/20/20", "paper": "160/200/20/20",
			"naive": "150/200/25/25", "collapsed": "133/200/34/33", "mesos": "150/200/25/25"},
		"collapsed": {"static": "15/15/15", "dynamic": "15/15/15", "paper": "15/15/15",
			"naive": "15/15/15", "collapsed": "20/10/10", "mesos": "15/15/15"},
		"blocked-only": {"static": "50/50/99", "dynamic": "50/50/99", "paper": "50/50/99",
			"naive": "100/0/100", "collapsed": "67/33/99", "mesos": "100/0/100"},
		"t-dove": {"static": "20/10/15/15", "dynamic": "20/10/15/15", "paper": "15/15/15/15",
			"naive": "30/0/15/15", "collapsed": "22/8/15/15", "mesos": "30/0/15/15"},
	}
	for name, byPolicy := range want {
		for policy, counts := range byPolicy {
			t.Run(name+"/"+policy, func(t *testing.T) {
				t.Parallel()
				f, err := os.Open(filepath.Join("..", "examples", "scenarios", name+".json"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				sc, err := ParseHDRFScenario(f)
				if err != nil {
					t.Fatal(err)
				}
				res, err := RunHDRF(sc, policy)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, leaf := range leafOrder(sc.Root) {
					got = append(got, strconv.FormatInt(res.Leaves[leaf].Tasks, 10))
				}
				if g := strings.Join(got, "/"); g != counts {
					t.Errorf("got %s, want %s", g, counts)
				}
			})
		}
	}
}

func leafOrder(n HDRFNode) []string {
	if len(n.Children) == 0 {
		return []string{n.Name}
	}
	var out []string
	for _, c := range n.Children {
		out = append(out, leafOrder(c)...)
	}
	return out
}
