package offers

// PlanPreemption against reference computations: the fewest victims a
// brute-force search finds, and the fair shares of the reference static
// fill. The clusters are the property tests' model (preempt_property_test.go).

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// TestPlanPreemption_minimal compares, on small random clusters (at most 4
// agents and 12 running tasks, a flat tree so that kinship does not
// order the candidates), the tasks one plan takes for one guarantee's need
// with the fewest a brute-force search over every subset finds: the
// fewest tasks, each one the planner may take (not non-preemptible, not the
// need's own; a non-revocable one only if every node between it and the
// need keeps its fair share of what it runs for sure once the whole subset
// is gone), whose removal lets the tasks the role lacks of its guarantee
// fit on the agents. The planner places one task at a time and picks
// greedily on each agent, so it may take more: at most one more per agent
// it takes from.
func TestPlanPreemption_minimal(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	checked, infeasible, short := 0, 0, 0
	extra := map[int]int{}
	for c := range 300 {
		s, k, need := newSmallSim(t, r)
		if k == 0 {
			continue
		}
		min, ok := s.bruteMin(need, k)
		p := s.a.PlanPreemption(s.runningTasks(), t0)
		byID := s.taskIndex()
		var victims []psVictim
		agents := map[protocol.AgentID]bool{}
		for _, v := range p.Preempt {
			victims = append(victims, psVictim{byID[v.TaskID], need})
			agents[v.AgentID] = true
		}
		s.checkProtection(victims)
		if !ok {
			infeasible++
			continue
		}
		checked++
		got := len(p.Preempt)
		extra[got-min]++
		for _, n := range p.Needs {
			if n.For == "role g" && int64(n.Covered) < k {
				short++
			}
		}
		if got < min || got > min+len(agents) {
			t.Fatalf("case %d: planner took %d tasks on %d agents for %d tasks of %v; the fewest that make room are %d\n%s",
				c, got, len(agents), k, need.kids[0].fw.shape, min, s.describe(p))
		}
	}
	if checked < 50 {
		t.Fatalf("only %d feasible cases (%d infeasible), want at least 50", checked, infeasible)
	}
	t.Logf("%d cases compared, %d where nothing makes room; tasks beyond the fewest: %v; %d where the planner placed fewer than the role lacks", checked, infeasible, extra, short)
}

// newSmallSim builds a small cluster: roles g (guaranteed, with one
// framework whose pending tasks exceed what it lacks) and up to three
// others, each with a framework running tasks on up to 4 agents, some
// revocable, some non-preemptible. It returns the tasks g lacks.
func newSmallSim(t *testing.T, r *rand.Rand) (*psim, int64, *psNode) {
	t.Helper()
	s := &psim{t: t, r: r, roles: map[string]*psNode{}, fwByID: map[protocol.FrameworkID]*psFw{},
		cfg: PreemptionConfig{Policy: PreemptGuarantees, MaxFraction: 1}}
	cfg := testConfig(PolicyDynamic)
	cfg.Preemption = s.cfg
	s.a = newAlloc(t, cfg)
	s.root = &psNode{weight: 1}
	s.roles[""] = s.root
	for i := range 1 + r.IntN(4) {
		ag := &psAgent{id: protocol.AgentID(fmt.Sprintf("a%d", i)), total: ppr{int64(2+r.IntN(5)) * 1000, int64(2+r.IntN(5)) * 2048}}
		must(t, s.a.AddAgent(agentInfo(string(ag.id), ag.total.resources(), nil)))
		s.agents = append(s.agents, ag)
		s.capacity = s.capacity.plus(ag.total)
	}
	addRole := func(path string) *psNode {
		s.seq++
		n := &psNode{path: path, parent: s.root, weight: float64(1 + r.IntN(3)), seq: s.seq}
		s.root.kids = append(s.root.kids, n)
		s.roles[path] = n
		must(t, s.a.SetRole(path, n.weight))
		return n
	}
	addFw := func(role *psNode, id string, shape ppr) *psFw {
		s.seq++
		f := &psFw{id: protocol.FrameworkID(id), shape: shape}
		f.leaf = &psNode{path: id, parent: role, weight: 1, seq: s.seq, fw: f}
		role.kids = append(role.kids, f.leaf)
		must(t, s.a.AddFramework(FrameworkInfo{ID: f.id, Role: role.path}))
		s.fws = append(s.fws, f)
		s.fwByID[f.id] = f
		return f
	}
	g := addRole("g")
	gf := addFw(g, "need", ppr{int64(1+r.IntN(3)) * 500, int64(1+r.IntN(4)) * 512})
	var others []*psFw
	for i := range 1 + r.IntN(3) {
		o := addRole(fmt.Sprintf("o%d", i))
		others = append(others, addFw(o, fmt.Sprintf("f%d", i), ppr{}))
	}
	for range 4 + r.IntN(9) {
		f := others[r.IntN(len(others))]
		ag := s.agents[r.IntN(len(s.agents))]
		res := ppr{int64(1+r.IntN(4)) * 500, int64(1+r.IntN(4)) * 1024}
		if !s.free(ag).holds(res) {
			continue
		}
		must(t, s.a.AddUsage(f.id, ag.id, res.resources()))
		s.taskSeq++
		s.changed()
		s.tasks = append(s.tasks, &psTask{id: protocol.TaskID(fmt.Sprintf("t%02d", s.taskSeq)), fw: f, ag: ag, res: res,
			revocable: r.IntN(4) == 0, np: r.IntN(6) == 0, started: s.taskSeq})
	}
	// A guarantee of a few of its tasks, set while the others run.
	k0 := int64(1 + r.IntN(3))
	g.named = [2]bool{true, r.IntN(2) == 0}
	g.guar = ppr{k0 * gf.shape[0], 0}
	if g.named[1] {
		g.guar[1] = k0 * gf.shape[1]
	}
	must(t, s.a.SetRoleGuarantee("g", g.guar.resources()))
	gf.pending = k0 + int64(r.IntN(3))
	s.declare(gf)
	s.changed()
	return s, s.lacks(g, []*psFw{gf}), g
}

// bruteMin is the fewest tasks whose removal lets k tasks of the need's
// shape fit, over every subset of the tasks the planner may take, and
// whether any subset does.
func (s *psim) bruteMin(need *psNode, k int64) (int, bool) {
	sh := need.kids[0].fw.shape
	var cands []*psTask
	for _, t := range s.tasks {
		if s.eligibleFor(t, need) {
			cands = append(cands, t)
		}
	}
	fair, sure := s.fair(), s.sure()
	best := -1
	for mask := 0; mask < 1<<len(cands); mask++ {
		n := bitsSet(mask)
		if best >= 0 && n >= best {
			continue
		}
		room := map[*psAgent]ppr{}
		var gone []*psTask
		for i, t := range cands {
			if mask&(1<<i) != 0 {
				room[t.ag] = room[t.ag].plus(t.res)
				gone = append(gone, t)
			}
		}
		var fit int64
		for _, ag := range s.agents {
			fit += s.free(ag).plus(room[ag]).fitCount(sh)
		}
		if fit < k || !s.keepsAll(gone, need, fair, sure) {
			continue
		}
		best = n
	}
	return best, best >= 0
}

// keepsAll reports whether, with every task in gone taken for the need,
// every node between a non-revocable one and the need keeps its fair share
// (by dominant share) and its guarantee of what it runs for sure.
func (s *psim) keepsAll(gone []*psTask, need *psNode, fair, sure map[*psNode]ppr) bool {
	for _, t := range gone {
		if t.revocable {
			continue
		}
		for _, x := range between(t, need) {
			left := sure[x]
			for _, u := range gone {
				if !u.revocable && u.fw.leaf.within(x) {
					left = left.minus(u.res)
				}
			}
			for j := range 2 {
				if x.named[j] && t.res[j] > 0 && left[j] < x.guar[j] {
					return false
				}
			}
			if s.dom(left)+shareEps < s.dom(fair[x]) {
				return false
			}
		}
	}
	return true
}

func bitsSet(m int) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// describe renders a small cluster and a plan for failure messages.
func (s *psim) describe(p PreemptionPlan) string {
	var b strings.Builder
	fair := s.fair()
	for _, ag := range s.agents {
		fmt.Fprintf(&b, "agent %s total %v free %v\n", ag.id, ag.total, s.free(ag))
	}
	for _, f := range s.fws {
		fmt.Fprintf(&b, "framework %s (role %s, weight %v) fair %v pending %d\n", f.id, f.leaf.parent.path, f.leaf.parent.weight, fair[f.leaf], f.pending)
	}
	for _, t := range s.tasks {
		fmt.Fprintf(&b, "task %s of %s on %s %v revocable %v non-preemptible %v\n", t.id, t.fw.id, t.ag.id, t.res, t.revocable, t.np)
	}
	fmt.Fprintf(&b, "plan: %v (needs %+v)", p.Preempt, p.Needs)
	return b.String()
}

// TestPreemptFill_matchesStaticFill checks that the fair shares preemption
// judges by (preemptFill) are what staticFill, the reference fill, gives
// for the same demand, on the simulated clusters at every hundredth step.
func TestPreemptFill_matchesStaticFill(t *testing.T) {
	t.Parallel()
	for seed := range uint64(2) {
		s := newPSim(t, psOpts{seed: seed + 41})
		for s.step = 0; s.step < 300; s.step++ {
			if s.step > 0 {
				s.setGuarantees()
			}
			s.events()
			s.apply(s.a.PlanPreemption(s.runningTasks(), s.now()))
			s.allocate()
			if s.step%100 != 0 {
				continue
			}
			got := s.a.preemptFairShares()
			want := staticFairShares(s.a)
			if len(got) != len(want) {
				t.Fatalf("seed %d step %d: %d nodes with a share, want %d", seed, s.step, len(got), len(want))
			}
			for n, v := range want {
				if !vecEqual(got[n], v) {
					t.Fatalf("seed %d step %d: node %q: got %v, want %v", seed, s.step, n.path, got[n], v)
				}
			}
		}
	}
}

// staticFairShares is preemptFairShares computed by staticFill.
func staticFairShares(a *Allocator) map[*node]vec {
	byKey := map[*framework]map[string]vec{}
	targets := staticFill(a.tree.root, a.capacity, func(f *framework) []fillShape {
		var out []fillShape
		keys := map[string]vec{}
		add := func(key string, r vec, count int64) {
			if r.isZero() || count <= 0 {
				return
			}
			for i := range out {
				if out[i].key == key {
					out[i].left = addCount(out[i].left, count)
					return
				}
			}
			keys[key] = r
			out = append(out, fillShape{key: key, res: r, left: count})
		}
		if f.declared && !f.suppressed {
			for _, s := range f.shapes {
				add(s.key, s.res, s.count)
			}
			for _, s := range f.optional {
				add(s.key, s.res, s.count)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(f.launched)) {
			add(key, f.launchRes[key], f.launched[key])
		}
		byKey[f] = keys
		return out
	})
	all := map[*node]vec{}
	for f, counts := range targets {
		var sum vec
		for key, n := range counts {
			for range n {
				sum = sum.add(byKey[f][key])
			}
		}
		for x := f.leaf; x != nil; x = x.parent {
			all[x] = all[x].add(sum)
		}
	}
	return all
}
