package offers

// The properties checked at every plan of the simulated master
// (preempt_property_test.go).

import (
	"math"
	"slices"

	"github.com/allot-project/allot/protocol"
)

type psVictim struct {
	t  *psTask
	nn *psNode
}

// checkPlan asserts the properties of one plan, at the moment of choice.
func (s *psim) checkPlan(p PreemptionPlan) {
	t := s.t
	t.Helper()
	byID := s.taskIndex()
	if s.allOff() {
		if len(p.Preempt)+len(p.Keep)+len(p.Needs) > 0 {
			t.Fatalf("step %d: policy off everywhere: got %d victims, %d kept, %d needs; want none", s.step, len(p.Preempt), len(p.Keep), len(p.Needs))
		}
		return
	}
	s.needsSeen += len(p.Needs)
	for _, n := range p.Needs {
		if pol := s.policyOf(s.needNode(n.For)); pol == PreemptOff || pol != n.Policy {
			t.Fatalf("step %d: need %s has policy %q, the test computes %q", s.step, n.For, n.Policy, pol)
		}
	}
	var victims []psVictim
	var spent ppr
	agentsOf := map[protocol.AgentID]bool{}
	fors := map[string]bool{}
	for _, v := range p.Preempt {
		tk := byID[v.TaskID]
		switch {
		case tk == nil:
			t.Fatalf("step %d: victim %s is not running", s.step, v.TaskID)
		case tk.np:
			t.Fatalf("step %d: non-preemptible task %s chosen for %s", s.step, tk.id, v.For)
		case tk.warned:
			t.Fatalf("step %d: task %s chosen again while warned (for %s, now for %s)", s.step, tk.id, tk.warnedFor, v.For)
		}
		s.times[tk.id]++
		s.maxTimes = max(s.maxTimes, s.times[tk.id])
		if _, ok := s.chosen[tk.id]; ok {
			s.rechosen++
		}
		nn := s.needNode(v.For)
		if !s.eligibleFor(tk, nn) {
			t.Fatalf("step %d: task %s of %s (revocable %v) is not eligible for %s", s.step, tk.id, tk.fw.id, tk.revocable, v.For)
		}
		if want := victimReason(tk.revocable); v.Reason != want {
			t.Fatalf("step %d: victim %s reason %q, want %q", s.step, tk.id, v.Reason, want)
		}
		victims = append(victims, psVictim{tk, nn})
		spent = spent.plus(tk.res)
		agentsOf[tk.ag.id] = true
		fors[v.For] = true
	}
	// The cap: MaxFraction of the capacity, unless the plan is one pick
	// (one need, one agent), which may always be taken.
	budget := ppr{int64(float64(s.capacity[0]) * s.cfg.MaxFraction), int64(float64(s.capacity[1]) * s.cfg.MaxFraction)}
	if !budget.holds(spent) && (len(agentsOf) > 1 || len(fors) > 1) {
		t.Fatalf("step %d: plan takes %v, more than the cap %v", s.step, spent, budget)
	}
	s.checkProtection(victims)
	s.checkKeep(p, byID)
	s.checkCovered(p, byID)
}

func (s *psim) allOff() bool {
	if s.cfg.Policy != PreemptOff {
		return false
	}
	for _, n := range s.roles {
		if n.policy != "" && n.policy != PreemptOff {
			return false
		}
	}
	return true
}

// checkProtection: no non-revocable victim takes a node between it and its
// need below the node's guarantee (in a resource the victim uses) or its
// fair share (by dominant share) of what it runs for sure. A node's loss is
// what the plan takes from under it for needs outside it; what it takes for
// a need inside only moves within the node.
func (s *psim) checkProtection(victims []psVictim) {
	var fair, sure map[*psNode]ppr
	for _, v := range victims {
		if v.t.revocable {
			continue
		}
		if fair == nil {
			fair, sure = s.fair(), s.sure()
		}
		for _, x := range between(v.t, v.nn) {
			var loss ppr
			for _, u := range victims {
				if !u.t.revocable && u.t.fw.leaf.within(x) && !u.nn.within(x) {
					loss = loss.plus(u.t.res)
				}
			}
			left := sure[x].minus(loss)
			for j := range 2 {
				if s.active(x) && x.named[j] && v.t.res[j] > 0 && left[j] < x.guar[j] {
					s.t.Fatalf("step %d: task %s taken for %s leaves %s %v of its guarantee %v", s.step, v.t.id, v.nn.path, x.path, left, x.guar)
				}
			}
			if s.dom(left)+shareEps < s.dom(fair[x]) {
				s.t.Fatalf("step %d: task %s taken for %s leaves %s with %v for sure, below its fair share %v (planner's %v)",
					s.step, v.t.id, v.nn.path, x.path, left, fair[x], s.plannerFair(x))
			}
		}
	}
}

// plannerFair is the planner's own fair share of x, for failure messages
// only.
func (s *psim) plannerFair(x *psNode) protocol.Resources {
	all := s.a.preemptFairShares()
	var n *node
	if x.fw != nil {
		n = s.a.frameworks[x.fw.id].leaf
	} else {
		n = s.a.tree.roles[x.path]
	}
	return s.a.reg.toResources(all[n])
}

// checkKeep: a warned task kept is kept for a need it is eligible for, and
// a task the plan keeps or releases was warned.
func (s *psim) checkKeep(p PreemptionPlan, byID map[protocol.TaskID]*psTask) {
	for _, v := range p.Keep {
		tk := byID[v.TaskID]
		if tk == nil || !tk.warned {
			s.t.Fatalf("step %d: kept %s was not warned", s.step, v.TaskID)
		}
		if !s.eligibleFor(tk, s.needNode(v.For)) {
			s.t.Fatalf("step %d: warned task %s of %s (revocable %v, warned for %s) kept for %s, which may not take it",
				s.step, tk.id, tk.fw.id, tk.revocable, tk.warnedFor, v.For)
		}
	}
	for _, v := range p.Release {
		if tk := byID[v.TaskID]; tk == nil || !tk.warned {
			s.t.Fatalf("step %d: released %s was not warned", s.step, v.TaskID)
		}
	}
}

// checkCovered: nothing is preempted for a need that warned tasks already
// cover. It applies to the plans the headroom of unmet guarantees cannot
// bind (headroomLoose; otherwise a guarantee's need may take what the
// headroom lacks besides room, and room that is there may not be handed
// out). Two forms, both sound whatever else the plan does:
//   - a warned task the plan releases, eligible for the need, on an agent
//     its pending tasks may use, that alone holds every one of them, would
//     have made room for the next one: no new victim may be chosen for it
//     (unless the task runs under a guarantee, which taking it could
//     leave short, so that the headroom of unmet guarantees would keep its
//     room from the need);
//   - when the warned tasks kept for a need alone make room, agent by
//     agent, for as many of its pending tasks as it still lacks (to reach
//     its guarantee, or to stay within its fair share), nothing new is
//     taken for it. (Only for needs whose frameworks share one shape.)
func (s *psim) checkCovered(p PreemptionPlan, byID map[protocol.TaskID]*psTask) {
	if !s.headroomLoose() {
		return
	}
	s.coveredChecks++
	newFor := map[string]int{}
	for _, v := range p.Preempt {
		newFor[v.For]++
	}
	for forName, k := range newFor {
		nn := s.needNode(forName)
		fws := s.needFws(nn)
		if len(fws) == 0 {
			s.t.Fatalf("step %d: %d tasks taken for %s, which has no pending demand", s.step, k, forName)
		}
		var top ppr
		for _, f := range fws {
			top = ppr{max(top[0], f.shape[0]), max(top[1], f.shape[1])}
		}
		for _, v := range p.Release {
			tk := byID[v.TaskID]
			if !s.eligibleFor(tk, nn) || !tk.res.holds(top) || s.underGuarantee(tk.fw) {
				continue
			}
			if !slices.ContainsFunc(fws, func(f *psFw) bool { return !f.admits(tk.ag) }) {
				s.t.Fatalf("step %d: %d new victims for %s while warned task %s (%v on %s), which alone makes room, is released",
					s.step, k, forName, tk.id, tk.res, tk.ag.id)
			}
		}
		f0 := fws[0]
		if slices.ContainsFunc(fws, func(f *psFw) bool { return f.shape != f0.shape || f.zone != f0.zone }) {
			continue
		}
		lacks := s.lacks(nn, fws)
		kept := map[*psAgent]ppr{}
		for _, v := range p.Keep {
			if v.For == forName {
				tk := byID[v.TaskID]
				kept[tk.ag] = kept[tk.ag].plus(tk.res)
			}
		}
		var room int64
		for ag, r := range kept {
			if f0.admits(ag) {
				room += r.fitCount(f0.shape)
			}
		}
		if lacks > 0 && room >= lacks {
			s.t.Fatalf("step %d: %d new victims for %s, which lacks %d tasks and whose kept warned tasks make room for %d",
				s.step, k, forName, lacks, room)
		}
	}
}

// headroomLoose reports whether the headroom of unmet guarantees cannot
// bind this plan: no guarantee is in force, or in every resource one names
// what is unallocated less what they lack covers all pending fair demand.
func (s *psim) headroomLoose() bool {
	unalloc := s.capacity
	for _, t := range s.tasks {
		unalloc = unalloc.minus(t.res)
	}
	var pending ppr
	for _, f := range s.fws {
		pending = pending.plus(f.shape.times(f.pending))
	}
	for j := range 2 {
		named := false
		var unmet int64
		for _, g := range s.roles {
			if g.named[j] && s.outermost(g) {
				named = true
				unmet += max(0, g.guar[j]-s.held(g)[j])
			}
		}
		if named && unalloc[j]-unmet < pending[j] {
			return false
		}
	}
	return true
}

// lacks is how many more pending tasks (of the one shape its frameworks
// share) the need at nn takes: until a guaranteed resource they use
// reaches the guarantee, or as many as stay within the framework's fair
// share; never more than are pending.
func (s *psim) lacks(nn *psNode, fws []*psFw) int64 {
	var pending int64
	for _, f := range fws {
		pending += f.pending
	}
	sh := fws[0].shape
	h := s.held(nn)
	if nn.fw == nil {
		k := int64(math.MaxInt64)
		for j := range 2 {
			if nn.named[j] && sh[j] > 0 {
				k = min(k, (max(0, nn.guar[j]-h[j])+sh[j]-1)/sh[j])
			}
		}
		return min(k, pending)
	}
	limit := s.dom(s.fair()[nn]) + shareEps
	var k int64
	for k < pending && s.dom(h.plus(sh.times(k+1))) <= limit {
		k++
	}
	return k
}

// countArisen adds up what arose since the last step that preemption may
// answer, weighted by how many victims answering one unit of it may take:
//   - for every need the test finds (a guaranteed role in force short of
//     its guarantee, or a framework below its fair share, under a policy
//     other than off, with pending demand), the increase of the tasks it
//     lacks, each weighted by victimsPerPlacement of its shape (the
//     largest such, for a role with several frameworks);
//   - the increase of what the headroom of unmet guarantees lacks (what
//     they lack less what is unallocated), in units of the smallest task
//     amount of each resource: a guarantee's need pays it from any agent,
//     and one victim pays at least one such unit.
func (s *psim) countArisen() {
	if s.allOff() {
		return
	}
	if s.lastLacks == nil {
		s.lastLacks = map[*psNode]int64{}
	}
	cur := map[*psNode]int64{}
	weight := map[*psNode]int{}
	for _, g := range s.roles {
		if g == s.root || !s.active(g) || s.policyOf(g) == PreemptOff {
			continue
		}
		for _, f := range s.needFws(g) {
			cur[g] = max(cur[g], s.lacks(g, []*psFw{f}))
			weight[g] = max(weight[g], s.victimsPerPlacement(f.shape))
		}
	}
	for _, f := range s.fws {
		if s.policyOf(f.leaf) == PreemptOff || f.pending == 0 {
			continue
		}
		cur[f.leaf] = s.lacks(f.leaf, []*psFw{f})
		weight[f.leaf] = s.victimsPerPlacement(f.shape)
	}
	for n, l := range cur {
		if d := l - s.lastLacks[n]; d > 0 {
			s.arisen += int(d)
			s.arisenCost += int(d) * weight[n]
		}
	}
	s.lastLacks = cur

	deficit := s.deficit()
	for j, m := range [2]int64{500, 512} {
		if d := deficit[j] - s.lastDeficit[j]; d > 0 {
			s.arisenCost += int((d + m - 1) / m)
		}
	}
	s.lastDeficit = deficit
}

// deficit is what the outermost guarantees in force lack beyond what is
// unallocated, per resource.
func (s *psim) deficit() ppr {
	unalloc := s.capacity
	for _, t := range s.tasks {
		unalloc = unalloc.minus(t.res)
	}
	var out ppr
	for j := range 2 {
		var unmet int64
		for _, g := range s.roles {
			if g.named[j] && s.outermost(g) {
				unmet += max(0, g.guar[j]-s.held(g)[j])
			}
		}
		out[j] = max(0, unmet-unalloc[j])
	}
	return out
}

// underGuarantee reports whether a role above f has a guarantee.
func (s *psim) underGuarantee(f *psFw) bool {
	for g := f.leaf.parent; g != nil; g = g.parent {
		if g.guaranteed() {
			return true
		}
	}
	return false
}

// outermost reports whether g has a guarantee and no role above it does.
func (s *psim) outermost(g *psNode) bool {
	if !g.guaranteed() {
		return false
	}
	for p := g.parent; p != nil; p = p.parent {
		if p.guaranteed() {
			return false
		}
	}
	return true
}
