package offers

import (
	"cmp"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// planTask is a running task during one plan.
type planTask struct {
	RunningTask
	f   *framework
	ag  *agent
	res vec
	// removed: chosen as a new victim in this plan; used: a warned task
	// this plan still needs.
	removed, used bool
	usedFor       string
}

// planner holds one PlanPreemption's working state. Nothing in the
// allocator changes but the memory of when needs began.
type planner struct {
	a     *Allocator
	now   time.Time
	tasks []planTask
	// byAgent lists each agent's tasks (indices into tasks) in the order
	// victims are preferred: revocable first, then the most recently
	// started, then by framework and task ID.
	byAgent [][]int
	// warnedOn lists the agents holding warned tasks, in agent order.
	warnedOn []*agent
	// sure is, per role and framework node, what its frameworks run for
	// sure: non-revocable tasks neither warned nor chosen.
	sure map[*node]vec
	fair map[*node]vec
	// vfree is each agent's free resources as the plan has used them (nil:
	// untouched, the agent's own).
	vfree  []vec
	budget vec
	spent  vec
	// placedFw and placedShape are the tasks the plan found room for, by
	// framework (their scalars) and by shape (their count).
	placedFw    map[*framework]vec
	placedShape map[*shape]int64
	out         PreemptionPlan
}

func newPlanner(a *Allocator, tasks []RunningTask, now time.Time) *planner {
	p := &planner{
		a: a, now: now,
		byAgent: make([][]int, len(a.agentList)),
		vfree:   make([]vec, len(a.agentList)),
		sure:    map[*node]vec{},

		placedFw:    map[*framework]vec{},
		placedShape: map[*shape]int64{},
	}
	p.tasks = make([]planTask, 0, len(tasks))
	for _, t := range tasks {
		f, fok := a.frameworks[t.FrameworkID]
		ag, aok := a.agents[t.AgentID]
		if !fok || !aok {
			if t.Warned {
				p.out.Release = append(p.out.Release, Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID, AgentID: t.AgentID, Reason: victimReason(t.Revocable)})
			}
			continue
		}
		res := a.reg.toVec(t.Resources)
		p.tasks = append(p.tasks, planTask{RunningTask: t, f: f, ag: ag, res: res})
	}
	warned := make([]bool, len(a.agentList))
	for i := range p.tasks {
		t := &p.tasks[i]
		p.byAgent[t.ag.idx] = append(p.byAgent[t.ag.idx], i)
		if t.Warned {
			warned[t.ag.idx] = true
		} else if !t.Revocable {
			p.addSure(t.f.leaf, t.res, 1)
		}
	}
	for i, list := range p.byAgent {
		slices.SortFunc(list, func(x, y int) int { return p.prefer(&p.tasks[x], &p.tasks[y]) })
		if warned[i] {
			p.warnedOn = append(p.warnedOn, a.agentList[i])
		}
	}
	for j, c := range a.capacity {
		p.budget = p.budget.grow(j + 1)
		p.budget[j] = int64(float64(c) * a.cfg.Preemption.MaxFraction)
	}
	return p
}

// prefer orders victims: revocable first, then the most recently started.
func (p *planner) prefer(x, y *planTask) int {
	if x.Revocable != y.Revocable {
		if x.Revocable {
			return -1
		}
		return 1
	}
	return cmp.Or(y.StartedAt.Compare(x.StartedAt), cmp.Compare(x.FrameworkID, y.FrameworkID), cmp.Compare(x.TaskID, y.TaskID))
}

// addSure adds sign*v to what n and its ancestors run for sure.
func (p *planner) addSure(n *node, v vec, sign int64) {
	for ; n != nil; n = n.parent {
		s := p.sure[n].grow(len(v))
		for j, x := range v {
			s[j] += sign * x
		}
		p.sure[n] = s
	}
}

func (p *planner) anyPolicy() bool {
	if p.a.cfg.Preemption.Policy != PreemptOff {
		return true
	}
	for _, n := range p.a.tree.roles {
		if n.preempt != "" && n.preempt != PreemptOff {
			return true
		}
	}
	return false
}

func (p *planner) free(ag *agent) vec {
	if v := p.vfree[ag.idx]; v != nil {
		return v
	}
	return ag.free
}

func (p *planner) setFree(ag *agent, v vec) { p.vfree[ag.idx] = v }

// usable reports whether one task of s for f could run on ag.
func (p *planner) usable(ag *agent, f *framework, s *shape) bool {
	return !ag.draining && p.a.satisfiesOn(ag, s) && p.a.rolesAdmit(f, ag)
}

// serve finds room for n's pending tasks, one at a time, until n is no
// longer short or no room can be made.
func (p *planner) serve(n *need) {
	for {
		f, s := p.next(n)
		if s == nil {
			return
		}
		if !p.place(n, f, s) {
			n.Blocked = true
			return
		}
		n.Covered++
		p.placedShape[s]++
		p.placedFw[f] = p.placedFw[f].add(s.res)
	}
}

// place makes room for one task of s (for f, serving n): free resources
// first, then warned tasks, then new victims.
func (p *planner) place(n *need, f *framework, s *shape) bool {
	for _, ag := range p.a.agentList {
		if p.free(ag).fits(s.res) && p.usable(ag, f, s) {
			p.setFree(ag, p.free(ag).clone().sub(s.res))
			return true
		}
	}
	if p.placeOnWarned(n, f, s) {
		return true
	}
	return p.placeOnVictims(n, f, s)
}

// placeOnWarned uses tasks warned by an earlier plan.
func (p *planner) placeOnWarned(n *need, f *framework, s *shape) bool {
	for _, ag := range p.warnedOn {
		if !p.usable(ag, f, s) {
			continue
		}
		short := shortfall(s.res, p.free(ag))
		var chosen []int
		for _, i := range p.byAgent[ag.idx] {
			t := &p.tasks[i]
			if !t.Warned || t.used || !covers(t.res, short) {
				continue
			}
			chosen = append(chosen, i)
			short = shortfall(short, t.res)
			if short.isZero() {
				break
			}
		}
		if !short.isZero() {
			continue
		}
		freed := p.free(ag).clone()
		for _, i := range chosen {
			t := &p.tasks[i]
			t.used, t.usedFor = true, n.For
			freed = freed.add(t.res)
		}
		p.setFree(ag, freed.sub(s.res))
		return true
	}
	return false
}

// placeOnVictims chooses new victims on the agent needing the fewest, from
// the nearest relatives of n that suffice.
func (p *planner) placeOnVictims(n *need, f *framework, s *shape) bool {
	var best pick
	for _, ag := range p.a.agentList {
		if !p.usable(ag, f, s) {
			continue
		}
		c, ok := p.pickOn(ag, n, s)
		if ok && (best.tasks == nil || c.better(best)) {
			best = c
			if c.tier == n.maxTier && len(c.tasks) == 1 && p.tasks[c.tasks[0]].Revocable {
				break // nothing can beat one revocable sibling task
			}
		}
	}
	if best.tasks == nil {
		return false
	}
	var took vec
	for _, i := range best.tasks {
		took = took.add(p.tasks[i].res)
	}
	if len(p.out.Preempt) > 0 && !p.budget.fits(p.spent.clone().add(took)) {
		return false
	}
	p.spent = p.spent.add(took)
	freed := p.free(best.ag).clone()
	for _, i := range best.tasks {
		t := &p.tasks[i]
		t.removed = true
		if !t.Revocable {
			p.addSure(t.f.leaf, t.res, -1)
		}
		freed = freed.add(t.res)
		p.out.Preempt = append(p.out.Preempt, Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID,
			AgentID: t.AgentID, Reason: victimReason(t.Revocable), For: n.For})
	}
	p.setFree(best.ag, freed.sub(s.res))
	return true
}

// finish lists the warned tasks kept and released and sorts the plan.
func (p *planner) finish() PreemptionPlan {
	for i := range p.tasks {
		t := &p.tasks[i]
		if !t.Warned {
			continue
		}
		v := Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID, AgentID: t.AgentID, Reason: victimReason(t.Revocable), For: t.usedFor}
		if t.used {
			p.out.Keep = append(p.out.Keep, v)
		} else {
			p.out.Release = append(p.out.Release, v)
		}
	}
	sortVictims(p.out.Preempt)
	sortVictims(p.out.Keep)
	sortVictims(p.out.Release)
	return p.out
}

func victimReason(revocable bool) string {
	if revocable {
		return protocol.ReasonRevoked
	}
	return protocol.ReasonPreempted
}

// shortfall is what need lacks once have is there: need − have, floored at
// zero in each resource.
func shortfall(need, have vec) vec {
	var out vec
	for j, x := range need {
		if d := x - have.at(j); d > 0 {
			out = out.grow(j + 1)
			out[j] = d
		}
	}
	return out
}

// covers reports whether r holds some of a resource short lacks.
func covers(r, short vec) bool {
	for j, x := range short {
		if x > 0 && r.at(j) > 0 {
			return true
		}
	}
	return false
}
