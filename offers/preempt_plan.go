package offers

import (
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// planTask is a running task during one plan, and to the next what this
// one looked up (preempt_memo.go).
type planTask struct {
	FrameworkID protocol.FrameworkID
	TaskID      protocol.TaskID
	AgentID     protocol.AgentID
	// Revocable, NonPreemptible and Warned are the RunningTask's, kept
	// here where the planner reads them most. removed: chosen as a new
	// victim in this plan; used: a warned task this plan still needs
	// (planner.usedFor says for which need).
	Revocable, NonPreemptible, Warned, removed, used bool
	f                                                *framework
	ag                                               *agent
	res                                              vec
	// fi and ai are f's and ag's indices (f.idx, ag.idx), kept here so
	// that indexing by them reads no framework or agent.
	fi, ai int32
	// startNs is StartedAt in Unix nanoseconds.
	startNs int64
}

// planner holds one PlanPreemption's working state. Nothing in the
// allocator changes but the memory of when needs began and the arrays it
// keeps for the next plan (planBufs), which hold nothing the next plan
// reads before writing.
type planner struct {
	a     *Allocator
	now   time.Time
	tasks []planTask
	// byAgent lists each agent's tasks (indices into tasks), which
	// onAgent sorts on first use in the order victims are preferred:
	// revocable first, then the most recently started, then by framework
	// and task ID.
	byAgent [][]int
	sorted  []bool
	// warnedOn lists the agents holding warned tasks, in agent order;
	// hasWarned says the same by agent index.
	warnedOn  []*agent
	hasWarned []bool
	// sure is, per role and framework node, what its frameworks run for
	// sure: non-revocable tasks neither warned nor chosen.
	sure map[*node]vec
	fair map[*node]vec
	// vfree is each agent's free resources as the plan has used them (nil:
	// untouched, the agent's own).
	vfree  []vec
	budget vec
	spent  vec
	// dfree and dheld track what a round will admit (admits).
	dfree vec
	dheld map[*node]vec
	// shortGuar caches underShortGuarantee by framework index (0 unknown,
	// 1 yes, -1 no).
	shortGuar []int8
	// byFw lists each framework's tasks (indices into tasks), revocable
	// ones first, by framework index; search is the victim search under
	// way (bestPick).
	byFw      [][]int
	search    *victimSearch
	states    searchState
	lookStamp uint32
	listStamp uint32
	// freeIdx finds free room (placeFree), once built.
	freeIdx freeIndex
	// agentVer counts the changes of each agent's room or tasks;
	// quickLists are readTierShared's.
	agentVer   []uint32
	quickLists map[*node]*quickList
	// touchLog lists the agents in the order their room or tasks changed
	// (preempt_walk.go).
	touchLog []int32
	// usedFor names, by task, the need a used warned task is kept for.
	usedFor map[int]string
	// dfsFws are the frameworks depth first; fwRange, by node, the range
	// of those below it; fwPos, by framework index, its place (below).
	dfsFws  []*framework
	fwRange map[*node][2]int32
	fwPos   []int32
	// cands, shortBuf and arena are scratch space.
	cands    []candidate
	shortBuf vec
	arena    []int
	// placedFw and placedShape are the tasks the plan found room for, by
	// framework (their scalars) and by shape (their count).
	placedFw    map[*framework]vec
	placedShape map[*shape]int64
	out         PreemptionPlan
	holds       map[*agent]*holdAt // preempt_hold.go
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

// setFree records ag's free resources as the plan has used them.
func (p *planner) setFree(ag *agent, v vec) {
	p.vfree[ag.idx] = v
	p.agentVer[ag.idx]++
	p.touchLog = append(p.touchLog, int32(ag.idx))
	if p.freeIdx.max != nil {
		p.freeIdx.set(ag.idx, v)
	}
	p.touched(ag)
}

// usable reports whether one task of s for f could run on ag.
func (p *planner) usable(ag *agent, f *framework, s *shape) bool {
	return !ag.draining && p.a.satisfiesOn(ag, s) && p.a.rolesAdmit(f, ag)
}

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

// payHeadroom takes, for a guarantee's need, warned tasks and new victims
// from any agent until the headroom of unmet guarantees lets a round hand
// one task of v to f; it reports whether it got there.
func (p *planner) payHeadroom(n *need, f *framework, v vec) bool {
	for {
		req := p.required(f, v)
		short := shortfall(req, nil)
		if short.isZero() {
			return true
		}
		if p.payFromWarned(n, short) {
			continue
		}
		var best pick
		bestCover := 0.0
		for _, ag := range p.a.agentList {
			c, ok := p.pickOn(ag, n, short, true)
			if !ok {
				continue
			}
			var got vec
			for _, i := range c.tasks {
				got = got.add(p.tasks[i].res)
			}
			cv := coverage(got, short)
			if best.tasks == nil || cv > bestCover+shareEps || cv >= bestCover-shareEps && c.better(best) {
				best, bestCover = c, cv
			}
		}
		if best.tasks == nil || !p.take(n, best) {
			return false
		}
	}
}

// payFromWarned uses the warned tasks n may take that hold some of short,
// the preferred first; it reports whether it used any.
func (p *planner) payFromWarned(n *need, short vec) bool {
	used := false
	for _, ag := range p.warnedOn {
		var take []int
		for _, i := range p.warnedOnFor(ag, n, short) {
			if covers(p.tasks[i].res, short) {
				take = append(take, i)
				short = shortfall(short, p.tasks[i].res)
			}
		}
		p.useWarned(n, ag, take)
		used = used || len(take) > 0
		if short.isZero() {
			break
		}
	}
	return used
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

// placeOnWarned uses tasks warned by an earlier plan that n may take (the
// rules for new victims but protection, which was checked when they were
// chosen), the fewest that make room.
func (p *planner) placeOnWarned(n *need, f *framework, s *shape, req vec) bool {
	for _, ag := range p.warnedOn {
		if !p.usable(ag, f, s) {
			continue
		}
		need := p.shortOn(ag, s, req)
		if need.isZero() {
			continue
		}
		short := need
		var chosen []int
		for _, i := range p.warnedOnFor(ag, n, need) {
			if !covers(p.tasks[i].res, short) {
				continue
			}
			chosen = append(chosen, i)
			short = shortfall(short, p.tasks[i].res)
			if short.isZero() {
				break
			}
		}
		if !short.isZero() {
			continue
		}
		chosen = p.prune(chosen, need)
		if !p.admits(f, s.res, chosen) {
			continue
		}
		p.useWarned(n, ag, chosen)
		p.setFree(ag, p.free(ag).clone().sub(s.res))
		p.launch(f, s.res)
		if n.guarantee && len(chosen) > 0 {
			p.hold(ag, n.node, s.res)
		}
		return true
	}
	return false
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

// warnedOnFor lists the warned tasks on ag, not used yet, that n may take
// and that hold some of short, the preferred first.
func (p *planner) warnedOnFor(ag *agent, n *need, short vec) []int {
	if !p.hasWarned[ag.idx] {
		return nil
	}
	var out []int
	for _, i := range p.onAgent(ag) {
		t := &p.tasks[i]
		if !t.Warned || t.used || t.NonPreemptible || !covers(t.res, short) {
			continue
		}
		if _, ok := p.eligible(t, n); ok {
			out = append(out, i)
		}
	}
	return out
}

// useWarned keeps the warned tasks on ag for n: their room is the plan's.
func (p *planner) useWarned(n *need, ag *agent, warned []int) {
	if len(warned) == 0 {
		return
	}
	freed := p.free(ag).clone()
	for _, i := range warned {
		t := &p.tasks[i]
		t.used = true
		if p.usedFor == nil {
			p.usedFor = map[int]string{}
		}
		p.usedFor[i] = n.For
		freed = freed.add(t.res)
		p.gone(t)
	}
	p.setFree(ag, freed)
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

// finish lists the warned tasks kept and released and sorts the plan.
func (p *planner) finish() PreemptionPlan {
	for i := range p.tasks {
		t := &p.tasks[i]
		if !t.Warned {
			continue
		}
		v := Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID, AgentID: t.AgentID, Reason: victimReason(t.Revocable), For: p.usedFor[i]}
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
