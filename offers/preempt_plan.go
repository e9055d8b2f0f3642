package offers

import (
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
