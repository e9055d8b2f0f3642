package carbyne

import (
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// maxPasses bounds the allocation passes of one round: a pass after the
// first only runs when the one before launched tasks and handed some
// resources back.
const maxPasses = 3

// allocate runs the round's allocation passes and launches tasks.
func (e *engine) allocate() error {
	for pass := 0; pass < maxPasses; pass++ {
		d := e.alloc.Allocate(e.at(e.now))
		if len(d.Offers) == 0 {
			return nil
		}
		if e.leftover == nil {
			e.recordLeftover(d.Offers)
		}
		launched, returned := 0, false
		for _, o := range d.Offers {
			n, back, err := e.take(o)
			if err != nil {
				return err
			}
			launched += n
			returned = returned || back
		}
		if launched == 0 || !returned {
			return nil
		}
	}
	return nil
}

// take launches tasks of the offer's job on it, most urgent first among
// those its quota for the offer's kind allows, and declines it if none
// fits. It returns how many tasks it launched and whether any of the
// offer went back to the free pool.
func (e *engine) take(o offers.Offer) (int, bool, error) {
	j := e.byFw[o.FrameworkID]
	q := j.fairQ
	if o.Kind == offers.KindLeftover {
		q = j.leftQ
	}
	free := make([]int64, len(e.dims))
	for d, name := range e.dims {
		free[d] = o.Resources.Scalars[name]
	}
	var tasks []protocol.Resources
	var stages []int
	for i := range q {
		st := &j.stage[q[i].stage]
		for k := 0; q[i].n > 0 && k < st.unstarted && fitsVec(st.need, free); k++ {
			subVec(free, st.need)
			tasks = append(tasks, st.demand)
			stages = append(stages, q[i].stage)
			q[i].n--
		}
	}
	if len(tasks) == 0 {
		ids := []protocol.OfferID{o.ID}
		if e.pol.declineLeftover(o.Kind) {
			return 0, true, e.alloc.DeclineLeftover(j.fw, ids, 0, e.at(e.now))
		}
		return 0, true, e.alloc.Decline(j.fw, ids, 0, e.at(e.now))
	}
	if _, err := e.alloc.AcceptTasks(j.fw, []protocol.OfferID{o.ID}, tasks, e.at(e.now)); err != nil {
		return 0, false, err
	}
	e.fair.advance(j, e.now)
	for _, s := range stages {
		if err := e.launch(j, s, o.AgentID); err != nil {
			return 0, false, err
		}
	}
	e.fair.set(j, e.now)
	for _, s := range stages {
		w := e.dominant(j.stage[s].need) * j.stage[s].dur.Seconds()
		if o.Kind == offers.KindLeftover {
			e.leftoverWork += w
		} else {
			e.fairWork += w
		}
	}
	back := false
	for _, x := range free {
		back = back || x > 0
	}
	return len(tasks), back, nil
}

// launch starts the next task of stage s of j on agent.
func (e *engine) launch(j *simJob, s int, agent protocol.AgentID) error {
	st := &j.stage[s]
	idx := st.next
	st.next++
	st.unstarted--
	st.running++
	st.sumStart += e.now
	st.lastStart = e.now
	addVec(j.used, st.need)
	addVec(e.clusterUse, st.need)
	if j.plan != nil {
		if err := j.plan.TaskStarted(altruism.TaskID{Stage: st.name, Index: idx}, e.at(e.now)); err != nil {
			return err
		}
	}
	e.taskSeq++
	e.tasks.Push(&simTask{end: e.now + st.dur, start: e.now, job: j, stage: s, index: idx, agent: agent, seq: e.taskSeq})
	return nil
}

// recordLeftover records the first round's leftover pool: what the fair
// offers leave free, then what is left after each leftover offer, as the
// largest fraction over resources.
func (e *engine) recordLeftover(os []offers.Offer) {
	pool := make([]int64, len(e.dims))
	for d := range pool {
		pool[d] = e.capacity[d] - e.clusterUse[d]
	}
	sub := func(r protocol.Resources) {
		for d, name := range e.dims {
			pool[d] -= r.Scalars[name]
		}
	}
	for _, o := range os {
		if o.Kind != offers.KindLeftover {
			sub(o.Resources)
		}
	}
	e.leftover = append(e.leftover, e.fraction(pool))
	for _, o := range os {
		if o.Kind == offers.KindLeftover {
			sub(o.Resources)
			e.leftover = append(e.leftover, e.fraction(pool))
		}
	}
}

// fraction is the largest share of the cluster v holds in any resource.
func (e *engine) fraction(v []int64) float64 {
	f := 0.0
	for d, x := range v {
		if e.capacity[d] > 0 {
			f = max(f, float64(x)/float64(e.capacity[d]))
		}
	}
	return f
}
