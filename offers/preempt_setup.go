package offers

import (
	"cmp"
	"time"

	"github.com/allot-project/allot/protocol"
)

// newPlanner sets up one plan: the running tasks indexed by agent and by
// framework in the order victims are preferred, what each role and
// framework runs for sure, and the scratch buffers kept between plans.
func newPlanner(a *Allocator, tasks []RunningTask, now time.Time) *planner {
	b := &a.preempt.bufs
	a.preempt.walks = 0
	nag := len(a.agentList)
	p := &planner{
		a: a, now: now,
		byAgent:  reuse(&b.byAgent, nag),
		vfree:    reuse(&b.vfree, nag),
		agentVer: reuse(&b.agentVer, nag),
		sure:     map[*node]vec{},

		placedFw:    map[*framework]vec{},
		placedShape: map[*shape]int64{},
	}
	b.quickRes.reset()
	b.quickCands.reset()
	b.quickIdx.reset()
	b.quickMost.reset()
	b.quickOpen.reset()
	b.tierFws.reset()
	perAgent, perFw, revFw := p.loadTasks(tasks)
	p.indexTasks(perAgent, perFw, revFw)
	p.sorted = reuse(&b.sorted, nag)
	for j, c := range a.capacity {
		p.budget = p.budget.grow(j + 1)
		p.budget[j] = int64(float64(c) * a.cfg.Preemption.MaxFraction)
	}
	return p
}

// loadTasks copies the running tasks into p.tasks, their vectors in one
// array, since the caller's tasks are not kept; a warned task of a gone
// framework or agent is released. It returns the count of tasks by agent
// and by framework, and of revocable ones by framework.
func (p *planner) loadTasks(tasks []RunningTask) (perAgent, perFw, revFw []int32) {
	a := p.a
	b := &a.preempt.bufs
	nag, nfw := len(a.agentList), len(a.fwByIdx)
	width := len(a.reg.names)
	walk, list, backing := b.tasks.begin(len(tasks), width)
	perAgent = reuse(&b.perAgent, nag)
	perFw = reuse(&b.perFw, nfw)
	revFw = reuse(&b.revFw, nfw)
	for i := range tasks {
		t := &tasks[i]
		startNs := t.StartedAt.UnixNano()
		k := len(list) * width
		pt := planTask{FrameworkID: t.FrameworkID, TaskID: t.TaskID, AgentID: t.AgentID,
			Revocable: t.Revocable, NonPreemptible: t.NonPreemptible, Warned: t.Warned,
			res: vec(backing[k : k+width : k+width]), startNs: startNs}
		if last := walk.find(t, startNs); a.reusable(last, width) {
			pt.f, pt.ag, pt.fi, pt.ai = last.f, last.ag, last.fi, last.ai
			copy(pt.res, last.res)
		} else {
			pt.f, pt.ag = a.frameworks[t.FrameworkID], a.agents[t.AgentID]
			if pt.f == nil || pt.ag == nil {
				if t.Warned {
					p.out.Release = append(p.out.Release, Victim{FrameworkID: t.FrameworkID, TaskID: t.TaskID, AgentID: t.AgentID, Reason: victimReason(t.Revocable)})
				}
				continue
			}
			pt.res = p.resVec(t.Resources, pt.res)
			pt.fi, pt.ai = int32(pt.f.idx), int32(pt.ag.idx)
		}
		list = append(list, pt)
		perAgent[pt.ai]++
		perFw[pt.fi]++
		if t.Revocable {
			revFw[pt.fi]++
		}
	}
	p.tasks = list
	b.tasks.end(list, width)
	return perAgent, perFw, revFw
}

// indexTasks lists p.tasks by agent and by framework, counted by
// loadTasks, and notes the agents holding warned tasks and what each
// framework runs for sure.
func (p *planner) indexTasks(perAgent, perFw, revFw []int32) {
	a := p.a
	b := &a.preempt.bufs
	nag, nfw := len(a.agentList), len(a.fwByIdx)
	// byAgent and byFw by counting, each in one array; byFw with each
	// framework's revocable tasks first.
	idx, fwIdx := reuse(&b.idx, len(p.tasks)), reuse(&b.fwIdx, len(p.tasks))
	off := 0
	for j, n := range perAgent {
		p.byAgent[j] = idx[off : off : off+int(n)]
		off += int(n)
	}
	p.byFw = reuse(&b.byFw, nfw)
	nextRev, nextSure := reuse(&b.nextRev, nfw), reuse(&b.nextSure, nfw)
	off = 0
	for j, n := range perFw {
		p.byFw[j] = fwIdx[off : off+int(n) : off+int(n)]
		nextRev[j], nextSure[j] = int32(off), int32(off)+revFw[j]
		off += int(n)
	}
	warned := reuse(&b.warned, nag)
	sureFw := make([]vec, nfw)
	for i := range p.tasks {
		t := &p.tasks[i]
		p.byAgent[t.ai] = append(p.byAgent[t.ai], i)
		if t.Revocable {
			fwIdx[nextRev[t.fi]] = i
			nextRev[t.fi]++
		} else {
			fwIdx[nextSure[t.fi]] = i
			nextSure[t.fi]++
		}
		if t.Warned {
			warned[t.ai] = true
		} else if !t.Revocable {
			sureFw[t.fi] = sureFw[t.fi].add(t.res)
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
}

// planBufs are the planner's large arrays, which the allocator keeps
// between plans so that a plan allocates little of them.
type planBufs struct {
	tasks                     planTasks // preempt_memo.go
	idx, fwIdx                []int
	perAgent, perFw           []int32
	revFw, nextRev, nextSure  []int32
	byAgent, byFw             [][]int
	vfree                     []vec
	warned, sorted            []bool
	agentVer                  []uint32
	epoch, ver, dirty, looked []uint32
	listed                    []uint32
	listedAt                  []int32
	picks                     []pick
	freeMax                   []int64
	// heap and pending are the victim search's, handed from one search
	// to the next.
	heap    []searchEntry
	pending []*agent
	// The shared lists' arrays (readTierShared) and the needs' framework
	// lists by tier.
	quickRes   slab[quickRes]
	quickCands slab[quickCand]
	quickIdx   slab[int32]
	quickMost  slab[int64]
	quickOpen  slab[bool]
	tierFws    slab[*framework]
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
		// Agents hold few tasks: an insertion sort, comparing the keys
		// that mostly decide before the full order.
		for k := 1; k < len(list); k++ {
			i := list[k]
			t := &p.tasks[i]
			m := k
			for ; m > 0; m-- {
				o := &p.tasks[list[m-1]]
				if t.Revocable == o.Revocable && t.startNs == o.startNs {
					if p.prefer(t, o) >= 0 {
						break
					}
				} else if t.Revocable != o.Revocable && !t.Revocable || t.Revocable == o.Revocable && t.startNs < o.startNs {
					break
				}
				list[m] = list[m-1]
			}
			list[m] = i
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
	return cmp.Or(cmp.Compare(x.FrameworkID, y.FrameworkID), cmp.Compare(x.TaskID, y.TaskID))
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

// slab hands out zeroed slices of one array kept between plans: a plan
// takes what it needs and the next takes it again (reset).
type slab[T any] struct {
	buf  []T
	used int
}

// take is n zero elements; a slab too small starts a larger array, and
// the slices already handed out keep the old one.
func (s *slab[T]) take(n int) []T {
	if s.used+n > len(s.buf) {
		s.buf = make([]T, max(2*len(s.buf), n, 1024))
		s.used = 0
	}
	out := s.buf[s.used : s.used+n : s.used+n]
	s.used += n
	clear(out)
	return out
}

func (s *slab[T]) reset() { s.used = 0 }
