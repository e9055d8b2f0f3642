package offers

// The simulated master of the PlanPreemption property tests
// (preempt_property_test.go): each step's events, plan, kills and
// allocation round.

import (
	"fmt"
	"math"
	"time"

	"github.com/allot-project/allot/protocol"
)

// victimsPerPlacement bounds how many tasks one placement of a task of
// shape sh may take: the planner's victims on an agent are irreducible (no
// one of them can be left out), so at most ⌈sh_j / m_j⌉ of them are kept
// for resource j, m_j being the smallest positive amount of j any task
// holds; summed over the resources.
func (s *psim) victimsPerPlacement(sh ppr) int {
	n := 0
	for j := range sh {
		m := int64(math.MaxInt64)
		for _, f := range s.fws {
			if f.shape[j] > 0 {
				m = min(m, f.shape[j])
			}
		}
		n += int((sh[j] + m - 1) / m)
	}
	return n
}

func (s *psim) now() time.Time { return at(time.Duration(s.step) * time.Second) }

// run simulates steps seconds of the master.
func (s *psim) run(steps int) {
	for s.step = 0; s.step < steps; s.step++ {
		if s.step > 0 {
			s.setGuarantees()
		}
		s.events()
		s.liveness()
		s.countArisen()
		p := s.a.PlanPreemption(s.runningTasks(), s.now())
		s.checkPlan(p)
		s.apply(p)
		s.allocate()
		s.checkModel()
	}
}

// events: demand arrives and leaves, tasks end on their own.
func (s *psim) events() {
	for _, f := range s.fws {
		changed := false
		switch x := s.r.IntN(200); {
		case x < 6:
			k := int64(1 + s.r.IntN(6))
			f.pending += k
			changed = true
		case x < 9:
			f.optional += int64(1 + s.r.IntN(4))
			changed = true
		case x < 11:
			f.pending, f.optional = 0, 0
			changed = true
		}
		if changed {
			s.declare(f)
		}
	}
	kept := s.tasks[:0]
	for _, t := range s.tasks {
		if s.r.IntN(1000) < 3 {
			must(s.t, s.a.Recover(t.fw.id, t.ag.id, t.res.resources()))
			continue
		}
		kept = append(kept, t)
	}
	s.tasks = kept
	s.changed()
}

func (s *psim) runningTasks() []RunningTask {
	out := make([]RunningTask, 0, len(s.tasks))
	for _, t := range s.tasks {
		if t.rt.TaskID == "" {
			t.rt = RunningTask{FrameworkID: t.fw.id, TaskID: t.id, AgentID: t.ag.id, Resources: t.res.resources(),
				Revocable: t.revocable, NonPreemptible: t.np, StartedAt: at(time.Duration(t.started) * time.Second)}
		}
		rt := t.rt
		rt.Warned = t.warned
		out = append(out, rt)
	}
	return out
}

// apply does what the leader does with a plan: warn, kill at the deadline
// what is still kept, withdraw what is released.
func (s *psim) apply(p PreemptionPlan) {
	defer s.changed()
	byID := s.taskIndex()
	for _, v := range p.Preempt {
		t := byID[v.TaskID]
		t.warned, t.warnedAt, t.warnedFor = true, s.step, v.For
		s.chosen[t.id] = s.step
		s.preempted++
	}
	kill := map[*psTask]bool{}
	for _, v := range p.Keep {
		if t := byID[v.TaskID]; s.step-t.warnedAt >= s.deadline {
			kill[t] = true
		}
	}
	for _, v := range p.Release {
		t := byID[v.TaskID]
		t.warned = false
	}
	if len(kill) == 0 {
		return
	}
	kept := s.tasks[:0]
	for _, t := range s.tasks {
		if kill[t] {
			must(s.t, s.a.Recover(t.fw.id, t.ag.id, t.res.resources()))
			s.killed++
			continue
		}
		kept = append(kept, t)
	}
	s.tasks = kept
}

// allocate runs a round; frameworks launch what they still want and
// decline the rest without a filter.
func (s *psim) allocate() {
	defer s.changed()
	now := s.now()
	d := s.a.Allocate(now)
	clear(s.launched)
	for _, o := range d.Offers {
		f := s.fwByID[o.FrameworkID]
		want := f.pending
		if o.Kind == KindLeftover {
			want = f.optional
		}
		n := min(o.Tasks, want)
		if n <= 0 {
			must(s.t, s.a.Decline(f.id, ids(o), 0, now))
			continue
		}
		tasks := make([]protocol.Resources, n)
		for i := range tasks {
			tasks[i] = f.shape.resources()
		}
		acc, err := s.a.AcceptTasks(f.id, ids(o), tasks, now)
		must(s.t, err)
		ag := s.agentByID(acc.Agent)
		for _, k := range acc.Kinds {
			t := &psTask{fw: f, ag: ag, res: f.shape, revocable: k == KindLeftover, started: s.step}
			s.taskSeq++
			t.id = protocol.TaskID(fmt.Sprintf("t%05d", s.taskSeq))
			own, other := &f.pending, &f.optional
			if t.revocable {
				own, other = other, own
			}
			if *own > 0 {
				*own--
			} else if *other > 0 {
				*other--
			}
			t.np = !t.revocable && f.npOK && s.npRoom(f, t.res)
			s.tasks = append(s.tasks, t)
			for x := f.leaf; x != nil; x = x.parent {
				s.launched[x] = true
			}
		}
	}
}

// npRoom reports whether f may run one more non-preemptible task of r:
// some guarantee above it is in force and each one in force keeps its
// non-preemptible tasks within it.
func (s *psim) npRoom(f *psFw, r ppr) bool {
	any := false
	for g := f.leaf.parent; g != nil; g = g.parent {
		if !s.active(g) {
			continue
		}
		any = true
		var np ppr
		for _, t := range s.tasks {
			if t.np && t.fw.leaf.within(g) {
				np = np.plus(t.res)
			}
		}
		np = np.plus(r)
		for j := range 2 {
			if g.named[j] && np[j] > g.guar[j] {
				return false
			}
		}
	}
	return any
}

func (s *psim) agentByID(id protocol.AgentID) *psAgent {
	for _, ag := range s.agents {
		if ag.id == id {
			return ag
		}
	}
	s.t.Fatalf("unknown agent %s", id)
	return nil
}

func (s *psim) taskIndex() map[protocol.TaskID]*psTask {
	m := make(map[protocol.TaskID]*psTask, len(s.tasks))
	for _, t := range s.tasks {
		m[t.id] = t
	}
	return m
}

// checkModel keeps the test's model honest: every framework's usage in the
// allocator is the sum of its tasks here, and no offer is left outstanding.
func (s *psim) checkModel() {
	used := map[*psFw]ppr{}
	for _, t := range s.tasks {
		used[t.fw] = used[t.fw].plus(t.res)
	}
	for _, f := range s.fws {
		u, err := s.a.Usage(f.id)
		must(s.t, err)
		if !u.Equal(used[f].resources()) {
			s.t.Fatalf("step %d: framework %s: allocator usage %s, model %v", s.step, f.id, u, used[f])
		}
	}
	if n := len(s.a.Outstanding()); n != 0 {
		s.t.Fatalf("step %d: %d offers outstanding after the frameworks answered", s.step, n)
	}
}
