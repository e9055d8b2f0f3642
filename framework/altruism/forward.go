package altruism

// forward packs the job's remaining DAG forward in time into one virtual
// bin the size of its share, ignoring machine boundaries (docs/carbyne.md), and
// leaves the result in p.fwd: every unstarted task's start, with the horizon
// T_k at which the last task finishes. Running tasks hold their demand until
// their remaining time is up; after a share cut they may hold more than the
// share, and nothing new starts until enough of them finish.
//
// At each event time it starts, one task at a time, the ready task that fits
// and aligns best with the free capacity, until nothing fits. It reports
// false when some task can never fit: then T_k is infinite, and only the
// tasks started at time 0 (the greedy set) are meaningful.
func (p *Planner) forward(j *Job) bool {
	p.fwd.reset()
	p.events.Reset()
	used := p.used
	clear(used)
	for _, r := range p.runs {
		used.addScaled(j.stages[r.stage].need, int64(r.count))
		p.events.Push(finishEvent{at: r.rem, stage: r.stage, count: r.count})
	}
	pending := 0
	for i := range j.stages {
		s := &j.stages[i]
		p.unf[i] = s.unfinished()
		p.wait[i] = s.waiting
		p.ready[i] = 0
		if s.waiting == 0 {
			p.ready[i] = s.unstarted
		}
		pending += s.unstarted
	}

	var now int64
	for {
		round := len(p.fwd.slots)
		for {
			best := p.pickForward(j, used)
			if best < 0 {
				break
			}
			p.ready[best]--
			pending--
			used.addScaled(j.stages[best].need, 1)
			p.fwd.add(best, now, 1)
		}
		for _, sl := range p.fwd.slots[round:] {
			p.events.Push(finishEvent{at: now + int64(j.stages[sl.stage].dur), stage: sl.stage, count: sl.count})
		}
		next, ok := p.events.Peek()
		if !ok {
			break
		}
		now = next.at
		for e, ok := p.events.Peek(); ok && e.at == now; e, ok = p.events.Peek() {
			p.events.Pop()
			used.addScaled(j.stages[e.stage].need, -int64(e.count))
			p.unf[e.stage] -= e.count
			if p.unf[e.stage] == 0 {
				for _, c := range j.stages[e.stage].children {
					p.wait[c]--
					if p.wait[c] == 0 {
						p.ready[c] = j.stages[c].unstarted
					}
				}
			}
		}
	}
	p.fwd.horizon = now
	return pending == 0
}

// pickForward returns the ready stage whose task fits in the share next to
// used and aligns best with the free capacity, or -1. Ties go to the longer
// task, then to the stage earlier in topological order.
func (p *Planner) pickForward(j *Job, used vec) int {
	best, bestScore := -1, 0.0
	for _, si := range j.order {
		if p.ready[si] == 0 {
			continue
		}
		s := &j.stages[si]
		if !s.need.fitsIn(used, j.capacity) {
			continue
		}
		score := alignment(s.need, used, j.capacity, p.invCap2)
		if best < 0 || score > bestScore || (score == bestScore && s.dur > j.stages[best].dur) {
			best, bestScore = si, score
		}
	}
	return best
}

// finishEvent is a group of count tasks of one stage finishing at time at
// (an offset from now, in nanoseconds) in a forward pack.
type finishEvent struct {
	at    int64
	stage int
	count int
}
