package offers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestTierLists_matchFwTier checks the victim search's framework lists by
// tier, built from the depth-first ranges of the tree, against fwTier
// asked framework by framework, for every need of random clusters.
func TestTierLists_matchFwTier(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		a := newAlloc(t, testConfig(PolicyDynamic))
		for i := range 6 {
			must(t, a.AddAgent(agentInfo(fmt.Sprintf("a%d", i), cpuMem(8000, 32000), nil)))
		}
		var fws []protocol.FrameworkID
		for i := range 3 {
			for j := range 3 {
				for k := range 2 {
					path := fmt.Sprintf("r%d/r%d/r%d", i, j, k)
					must(t, a.SetRole(path, float64(1+r.IntN(3))))
					id := protocol.FrameworkID(fmt.Sprintf("f%d%d%d", i, j, k))
					must(t, a.AddFramework(FrameworkInfo{ID: id, Role: path}))
					fws = append(fws, id)
				}
			}
		}
		var tasks []RunningTask
		for n := range 40 {
			f, ag := fws[r.IntN(len(fws))], protocol.AgentID(fmt.Sprintf("a%d", r.IntN(6)))
			if err := a.AddUsage(f, ag, cpuMem(1000, 4000)); err != nil {
				continue // the agent is full
			}
			tasks = append(tasks, RunningTask{FrameworkID: f, AgentID: ag, TaskID: protocol.TaskID(fmt.Sprint("t", n)),
				Resources: cpuMem(1000, 4000), Revocable: r.IntN(3) == 0, StartedAt: time.Unix(int64(n), 0)})
		}
		for _, f := range fws {
			if r.IntN(3) == 0 {
				demand(t, a, string(f), Demand{Resources: cpuMem(1000, 4000), Count: int64(1 + r.IntN(5))})
			}
		}
		must(t, a.SetRoleGuarantee(fmt.Sprintf("r%d/r%d", r.IntN(3), r.IntN(3)), cpus(20000)))
		p := newPlanner(a, tasks, time.Unix(100, 0))
		needs := p.findNeeds()
		if len(needs) == 0 {
			t.Fatalf("seed %d: no needs to check", seed)
		}
		for _, n := range needs {
			p.below(p.a.tree.root)
			got := p.tierLists(n)
			want := make([][]*framework, n.maxTier+1)
			for _, f := range p.a.fwByIdx {
				if f == nil || len(p.byFw[f.idx]) == 0 {
					continue
				}
				if tier, ok := p.fwTier(f, n); ok {
					want[tier] = append(want[tier], f)
				}
			}
			for tier := range want {
				ids := func(l []*framework) []string {
					var out []string
					for _, f := range l {
						out = append(out, string(f.id))
					}
					slices.Sort(out)
					return out
				}
				if g, w := ids(got[tier]), ids(want[tier]); !slices.Equal(g, w) {
					t.Fatalf("seed %d need %s tier %d: tierLists %v, fwTier %v", seed, n.For, tier, g, w)
				}
			}
		}
	}
}
