package offers

import (
	"slices"
)

// serve finds room for n's pending tasks, one at a time, until n is no
// longer short or no room can be made for any of them: a shape no room is
// found for is set aside and the next one tried.
func (p *planner) serve(n *need) {
	for {
		f, s := p.next(n)
		if s == nil {
			return
		}
		if !p.place(n, f, s) {
			n.Blocked = true
			n.stuck = append(n.stuck, s)
			continue
		}
		n.Covered++
		p.placedShape[s]++
		p.placedFw[f] = p.placedFw[f].add(s.res)
	}
}

// serveFree finds free room for n's pending tasks, taking nothing.
func (p *planner) serveFree(n *need) {
	for {
		f, s := p.next(n)
		if s == nil || !p.placeFreeFor(n, f, s) {
			return
		}
		n.Covered++
		p.placedShape[s]++
		p.placedFw[f] = p.placedFw[f].add(s.res)
	}
}

// placeFreeFor is placeFree for n, holding the room for a guarantee.
func (p *planner) placeFreeFor(n *need, f *framework, s *shape) bool {
	ag := p.placeFree(f, s)
	if ag != nil && n.guarantee {
		p.hold(ag, n.node, s.res)
	}
	return ag != nil
}

// placeFree places one task of s for f on free resources a round would
// hand it: the first agent in order whose free resources hold it. It
// returns the agent, nil when none holds it.
func (p *planner) placeFree(f *framework, s *shape) *agent {
	if !shortfall(p.required(f, s.res), nil).isZero() || !p.admits(f, s.res, nil) {
		return nil
	}
	if p.freeIdx.max == nil {
		p.freeIdx = newFreeIndex(p)
	}
	for i := p.freeIdx.first(0, s.res); i >= 0; i = p.freeIdx.first(i+1, s.res) {
		if ag := p.a.agentList[i]; p.usable(ag, f, s) {
			p.setFree(ag, p.free(ag).clone().sub(s.res))
			p.launch(f, s.res)
			return ag
		}
	}
	return nil
}

// place makes room for one task of s (for f, serving n): free resources
// first, then warned tasks, then new victims. Room counts only if the next
// round would hand it to f (admits). When the headroom of unmet
// guarantees lacks something s uses, what the plan frees must make it up:
// a guarantee's need frees it with the task's room on one agent if it can,
// else first from anywhere (payHeadroom); any other need frees it with the
// task's room, and takes nothing while the headroom lacks more than its
// task.
func (p *planner) place(n *need, f *framework, s *shape) bool {
	req := shortfall(p.required(f, s.res), nil) // what it asks for, if anything
	if !req.isZero() {
		if n.guarantee {
			// One agent where what is freed makes both, or else the
			// headroom first, from anywhere.
			if p.placeOnWarned(n, f, s, req) || p.placeOnVictims(n, f, s, req) {
				return true
			}
			if !p.payHeadroom(n, f, s.res) {
				return false
			}
			req = nil
		} else if !s.res.fits(req) {
			return false
		}
	}
	if req.isZero() && p.placeFreeFor(n, f, s) {
		return true
	}
	if p.placeOnWarned(n, f, s, req) {
		return true
	}
	return p.placeOnVictims(n, f, s, req)
}

// shortOn is what must be freed on ag for one task of s: what its free
// resources lack, and at least req.
func (p *planner) shortOn(ag *agent, s *shape, req vec) vec {
	short := shortfall(s.res, p.free(ag))
	for j, x := range req {
		if x > short.at(j) {
			short = short.grow(j + 1)
			short[j] = x
		}
	}
	return short
}

// placeOnVictims chooses new victims on the agent needing the fewest, from
// the nearest relatives of n that suffice, with the warned tasks there n
// may take counted as room first (bestPick).
func (p *planner) placeOnVictims(n *need, f *framework, s *shape, req vec) bool {
	best, ok := p.bestPick(n, f, s, req)
	if !ok {
		return false
	}
	if len(best.warned) > 0 {
		// Keep only the warned tasks the victims leave needed.
		all := p.prune(append(slices.Clone(best.tasks), best.warned...), best.short)
		best.warned = all[len(best.tasks):]
	}
	if !p.admits(f, s.res, append(slices.Clone(best.tasks), best.warned...)) || !p.take(n, best) {
		return false
	}
	p.useWarned(n, best.ag, best.warned)
	p.setFree(best.ag, p.free(best.ag).clone().sub(s.res))
	p.launch(f, s.res)
	if n.guarantee {
		p.hold(best.ag, n.node, s.res)
	}
	return true
}

// take makes c's tasks victims for n, within the plan's cap (one pick may
// always be taken first); it reports whether it could.
func (p *planner) take(n *need, c pick) bool {
	var took vec
	for _, i := range c.tasks {
		took = took.add(p.tasks[i].res)
	}
	if len(p.out.Preempt) > 0 && !p.budget.fits(p.spent.clone().add(took)) {
		return false
	}
	p.spent = p.spent.add(took)
	freed := p.free(c.ag).clone()
	for _, i := range c.tasks {
		t := &p.tasks[i]
		t.removed = true
		if !t.Revocable {
			p.addSure(t.f.leaf, t.res, -1)
			p.sureChanged(t.f.leaf)
		}
		freed = freed.add(t.res)
		p.gone(t)
		p.out.Preempt = append(p.out.Preempt, Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID,
			AgentID: t.AgentID, Reason: victimReason(t.Revocable), For: n.For})
	}
	p.setFree(c.ag, freed)
	return true
}
