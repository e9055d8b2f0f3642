package offers

// The liveness property of the simulated master (preempt_property_test.go):
// a role short of its guarantee gets it back within a bound.

import (
	"fmt"
	"math"
)

// liveness tracks, for each guaranteed role whose policy takes back for
// guarantees (guarantees or fair), how long it has been short with pending
// demand while preemption could fix it without gaining ground (holding
// more of a guaranteed resource than the step before), and fails past the
// bound (livenessBound). Demand that trickles in keeps a role short for as
// long as it comes; what is measured is that each time it gets closer.
//
// "Could fix": some framework under the role has a pending task of shape
// s, the role is short of its guarantee in every guaranteed resource s uses
// (at least one: as long as that holds the planner keeps serving it), and
// either the headroom of unmet guarantees lets a round hand that task out
// and, on one agent whose attributes admit s, s fits in the free resources
// plus the tasks there the planner may take for the role whatever else it
// takes on that agent; or the headroom lacks something and the tasks the
// planner may take whatever else it takes anywhere hold what it lacks plus
// s, and on one admitting agent s fits in the free resources plus those of
// them that are there. The tasks the planner may take for the role are not
// non-preemptible, not warned, of frameworks outside the role, and either
// revocable or such that every node between the task's framework and the
// role keeps its guarantee and fair share of what it runs for sure even if
// every such non-revocable task (on that agent; anywhere) were taken.
func (s *psim) liveness() {
	if s.allOff() {
		return
	}
	for _, g := range s.roles {
		if !s.active(g) || s.policyOf(g) == PreemptOff {
			delete(s.streak, g)
			continue
		}
		if s.shortWithDemand(g) {
			s.shortSteps++
		}
		h := s.held(g)
		// A task launched under g in the last round is ground gained,
		// whether or not another of its tasks ended since.
		gained := s.launched[g]
		for j := range 2 {
			gained = gained || g.named[j] && h[j] > s.lastHeld[g][j]
		}
		s.lastHeld[g] = h
		if gained {
			delete(s.streak, g)
		}
		if s.couldFix(g) {
			s.fixSteps++
			s.streak[g]++
			if s.streak[g] > s.maxStreak {
				s.maxStreak, s.maxStreakAt = s.streak[g], fmt.Sprintf("%s at step %d", g.path, s.step)
			}
			if b := s.livenessBound(); s.streak[g] > b {
				s.t.Fatalf("step %d: role %s short of its guarantee %v (holds %v) with pending demand for %d steps without gaining ground though preemption could fix it; bound %d",
					s.step, g.path, g.guar, s.held(g), s.streak[g], b)
			}
		} else {
			delete(s.streak, g)
		}
	}
}

// livenessBound: the need waits out the delay and is served in the plan
// after it: its victims are warned, killed at the deadline, and the round
// of that step launches the role's task (the room is held for it,
// preempt_hold.go), counted at the next step. Where the cap binds, each
// plan newly takes at least one task unit and up to MaxFraction of the
// capacity, guarantees (all together within 60% of it) being served
// first, so within ⌈0.6/MaxFraction⌉ + 1 plans every guaranteed role's
// shortfall is warned, plus one plan per guaranteed role for the units a
// role that ranks first wastes of the cap, and two steps more for the
// need to be seen and the launch to be counted.
func (s *psim) livenessBound() int {
	if s.cfg.MaxFraction >= 1 {
		return s.delay + s.deadline + 1
	}
	return s.delay + s.deadline + int(math.Ceil(0.6/s.cfg.MaxFraction)) + 1 + s.nGuar + 2
}

func (s *psim) shortWithDemand(g *psNode) bool {
	h := s.held(g)
	for _, f := range s.needFws(g) {
		for j := range 2 {
			if g.named[j] && f.shape[j] > 0 && h[j] < g.guar[j] {
				return true
			}
		}
	}
	return false
}

func (s *psim) couldFix(g *psNode) bool {
	for x := g.parent; x != nil; x = x.parent {
		if s.shortOf(x) {
			// Room made for g goes to x's frameworks in the order of a
			// round; x's own liveness is checked.
			return false
		}
	}
	h := s.held(g)
	var shapes []*psFw
	for _, f := range s.needFws(g) {
		uses, short := false, true
		for j := range 2 {
			if g.named[j] && f.shape[j] > 0 {
				uses = true
				short = short && h[j] < g.guar[j]
			}
		}
		if uses && short {
			shapes = append(shapes, f)
		}
	}
	if len(shapes) == 0 {
		return false
	}
	var cands []*psTask
	for _, t := range s.tasks {
		if !t.warned && s.eligibleFor(t, g) {
			cands = append(cands, t)
		}
	}
	// What every node runs for sure among the candidates, anywhere and on
	// each agent.
	anySum := map[*psNode]ppr{}
	agSum := map[*psAgent]map[*psNode]ppr{}
	for _, t := range cands {
		if t.revocable {
			continue
		}
		if agSum[t.ag] == nil {
			agSum[t.ag] = map[*psNode]ppr{}
		}
		for x := t.fw.leaf; x != nil; x = x.parent {
			anySum[x] = anySum[x].plus(t.res)
			agSum[t.ag][x] = agSum[t.ag][x].plus(t.res)
		}
	}
	onAgent := map[*psAgent]ppr{}  // takeable there, however much is taken there
	anywhere := map[*psAgent]ppr{} // takeable there, however much is taken anywhere
	var total ppr
	for _, t := range cands {
		if t.revocable || s.rich(t, g, agSum[t.ag]) {
			onAgent[t.ag] = onAgent[t.ag].plus(t.res)
		}
		if t.revocable || s.rich(t, g, anySum) {
			anywhere[t.ag] = anywhere[t.ag].plus(t.res)
			total = total.plus(t.res)
		}
	}
	for _, f := range shapes {
		lack := s.headroomLack(f, f.shape)
		for _, ag := range s.agents {
			if !f.admits(ag) {
				continue
			}
			if lack == (ppr{}) && s.free(ag).plus(onAgent[ag]).holds(f.shape) {
				return true
			}
			if s.free(ag).plus(anywhere[ag]).holds(f.shape) && total.holds(lack.plus(f.shape)) {
				return true
			}
		}
	}
	return false
}

// rich reports whether every node between t's framework and g keeps its
// guarantee and its fair share of what it runs for sure even if what out
// says it runs among the candidates were taken.
func (s *psim) rich(t *psTask, g *psNode, out map[*psNode]ppr) bool {
	fair, sure := s.fair(), s.sure()
	for _, x := range between(t, g) {
		left := sure[x].minus(out[x])
		for j := range 2 {
			if s.active(x) && x.named[j] && left[j] < x.guar[j] {
				return false
			}
		}
		if s.dom(left) < s.dom(fair[x])+shareEps {
			return false
		}
	}
	return true
}

// headroomLack is what must be freed, cluster-wide, for a round to hand
// one task of sh to f under the headroom of unmet guarantees (computed
// here as guarantee.go states it: no allocation leaves less unallocated
// than the outermost guarantees still lack, a unit for a short role
// shrinking what it lacks).
func (s *psim) headroomLack(f *psFw, sh ppr) ppr {
	unalloc := s.capacity
	for _, t := range s.tasks {
		unalloc = unalloc.minus(t.res)
	}
	var out ppr
	for j := range 2 {
		if sh[j] == 0 {
			continue
		}
		named := false
		var unmet, met int64
		for _, g := range s.roles {
			if !g.named[j] || !s.outermost(g) {
				continue
			}
			named = true
			lack := max(0, g.guar[j]-s.held(g)[j])
			unmet += lack
			if f.leaf.within(g) {
				met = min(sh[j], lack)
			}
		}
		if named {
			out[j] = max(0, sh[j]-met-(unalloc[j]-unmet))
		}
	}
	return out
}
