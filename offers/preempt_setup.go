package offers

import (
	"cmp"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// newPlanner sets up one plan: the running tasks indexed by agent and by
// framework in the order victims are preferred, what each role and
// framework runs for sure, and the scratch buffers kept between plans.
func newPlanner(a *Allocator, tasks []RunningTask, now time.Time) *planner {
	b := &a.preempt.bufs
	nag, nfw := len(a.agentList), len(a.fwByIdx)
	p := &planner{
		a: a, now: now,
		byAgent:  reuse(&b.byAgent, nag),
		vfree:    reuse(&b.vfree, nag),
		agentVer: reuse(&b.agentVer, nag),
		sure:     map[*node]vec{},

		placedFw:    map[*framework]vec{},
		placedShape: map[*shape]int64{},
	}
	p.tasks = reuse(&b.tasks, len(tasks))[:0]
	// One backing array for the tasks' vectors; the caller's tasks are
	// not copied. Consecutive tasks mostly share their framework or agent.
	width := len(a.reg.names)
	backing := reuse(&b.backing, len(tasks)*width)
	var f *framework
	var ag *agent
	perAgent := reuse(&b.perAgent, nag)
	perFw := reuse(&b.perFw, nfw)
	for i := range tasks {
		t := &tasks[i]
		if f == nil || f.id != t.FrameworkID {
			f = a.frameworks[t.FrameworkID]
		}
		if ag == nil || ag.id != t.AgentID {
			ag = a.agents[t.AgentID]
		}
		if f == nil || ag == nil {
			if t.Warned {
				p.out.Release = append(p.out.Release, Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID, AgentID: t.AgentID, Reason: victimReason(t.Revocable)})
			}
			continue
		}
		k := len(p.tasks) * width
		res := p.resVec(t.Resources, vec(backing[k:k+width:k+width]))
		p.tasks = append(p.tasks, planTask{RunningTask: t, Revocable: t.Revocable, NonPreemptible: t.NonPreemptible, Warned: t.Warned,
			f: f, ag: ag, res: res, startNs: t.StartedAt.UnixNano()})
		perAgent[ag.idx]++
		perFw[f.idx]++
	}
	// byAgent and byFw by counting, each in one array.
	idx, fwIdx := reuse(&b.idx, len(p.tasks)), reuse(&b.fwIdx, len(p.tasks))
	off := 0
	for j, n := range perAgent {
		p.byAgent[j] = idx[off : off : off+int(n)]
		off += int(n)
	}
	p.byFw = reuse(&b.byFw, nfw)
	off = 0
	for j, n := range perFw {
		p.byFw[j] = fwIdx[off : off : off+int(n)]
		off += int(n)
	}
	warned := reuse(&b.warned, nag)
	sureFw := make([]vec, nfw)
	for i := range p.tasks {
		if t := &p.tasks[i]; t.Revocable {
			p.byFw[t.f.idx] = append(p.byFw[t.f.idx], i)
		}
	}
	for i := range p.tasks {
		t := &p.tasks[i]
		p.byAgent[t.ag.idx] = append(p.byAgent[t.ag.idx], i)
		if !t.Revocable {
			p.byFw[t.f.idx] = append(p.byFw[t.f.idx], i)
		}
		if t.Warned {
			warned[t.ag.idx] = true
		} else if !t.Revocable {
			sureFw[t.f.idx] = sureFw[t.f.idx].add(t.res)
		}
	}
	for _, f := range a.fwByIdx {
		if f != nil && sureFw[f.idx] != nil {
			p.addSure(f.leaf, sureFw[f.idx], 1)
		}
	}
	for i := range p.byAgent {
		if warned[i] {
			p.warnedOn = append(p.warnedOn, a.agentList[i])
		}
	}
	p.hasWarned = warned
	p.sorted = reuse(&b.sorted, nag)
	for j, c := range a.capacity {
		p.budget = p.budget.grow(j + 1)
		p.budget[j] = int64(float64(c) * a.cfg.Preemption.MaxFraction)
	}
	return p
}

// planBufs are the planner's large arrays, which the allocator keeps
// between plans so that a plan allocates little of them (tasks keeps the
// last caller's tasks reachable until the next plan).
type planBufs struct {
	tasks                     []planTask
	backing                   []int64
	idx, fwIdx                []int
	perAgent, perFw           []int32
	byAgent, byFw             [][]int
	vfree                     []vec
	warned, sorted            []bool
	agentVer                  []uint32
	epoch, ver, dirty, looked []uint32
	listed                    []uint32
	picks                     []pick
	freeMax                   []int64
	// heap and pending are the victim search's, handed from one search
	// to the next.
	heap    []searchEntry
	pending []*agent
}

// reuse is *buf with n zero elements, reallocated only when too small.
func reuse[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
		return *buf
	}
	s := (*buf)[:n]
	clear(s)
	return s
}

// resVec is res's scalars in buf (zeroed, as long as the registry), or a
// new vector if res names a resource the registry did not know.
func (p *planner) resVec(res protocol.Resources, buf vec) vec {
	found := 0
	for j, name := range p.a.reg.names {
		if x, ok := res.Scalars[name]; ok {
			buf[j] = x
			found++
		}
	}
	if found == len(res.Scalars) {
		return buf
	}
	for name, x := range res.Scalars {
		if _, known := p.a.reg.index[name]; known || x == 0 {
			continue
		}
		j := p.a.reg.id(name)
		buf = buf.grow(j + 1)
		buf[j] = x
	}
	return buf
}

// onAgent is ag's tasks in the order victims are preferred.
func (p *planner) onAgent(ag *agent) []int {
	list := p.byAgent[ag.idx]
	if !p.sorted[ag.idx] {
		p.sorted[ag.idx] = true
		if len(list) > 1 {
			slices.SortFunc(list, func(x, y int) int { return p.prefer(&p.tasks[x], &p.tasks[y]) })
		}
	}
	return list
}

// prefer orders victims: revocable first, then the most recently started.
func (p *planner) prefer(x, y *planTask) int {
	if x.Revocable != y.Revocable {
		if x.Revocable {
			return -1
		}
		return 1
	}
	if x.startNs != y.startNs {
		return cmp.Compare(y.startNs, x.startNs)
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
