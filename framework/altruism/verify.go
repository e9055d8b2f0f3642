package altruism

import "slices"

// sweepEvent is a change of usage at time at (offset from now) by
// delta·need of stage; planned marks planned (not running) tasks.
type sweepEvent struct {
	at      int64
	stage   int
	delta   int
	planned bool
}

// verify reports whether a normalized schedule is one the job can follow
// from now with its current share and estimates, finishing by the
// schedule's horizon:
//
//   - it plans every unstarted task exactly once, none before now;
//   - every running and planned task finishes by the horizon;
//   - no task starts before every task of its parent stages has finished;
//   - whenever a planned task runs, running and planned tasks together fit
//     in the share. (Running tasks alone may exceed it after a share cut or
//     a leftover grant; the schedule must then start nothing until they fit.)
//
// Both packers aim for this, but the reverse pack is a heuristic that can
// overrun its horizon, and a commitment may have gone stale.
func (p *Planner) verify(j *Job, s *schedule) bool {
	horizon := s.horizon
	for i := range j.stages {
		p.left[i] = 0
		p.finish[i] = 0
		p.first[i] = horizon
	}
	for _, r := range p.runs {
		if r.rem > horizon {
			return false
		}
		p.finish[r.stage] = max(p.finish[r.stage], r.rem)
	}
	for _, sl := range s.slots {
		end := sl.start + int64(j.stages[sl.stage].dur)
		if sl.start < 0 || end > horizon {
			return false
		}
		p.left[sl.stage] += sl.count
		p.finish[sl.stage] = max(p.finish[sl.stage], end)
		p.first[sl.stage] = min(p.first[sl.stage], sl.start)
	}
	for i := range j.stages {
		st := &j.stages[i]
		if p.left[i] != st.unstarted {
			return false
		}
		if st.unstarted == 0 {
			continue
		}
		for _, par := range st.parents {
			if p.first[i] < p.finish[par] {
				return false
			}
		}
	}
	return p.fitsThroughout(j, s)
}

// fitsThroughout sweeps the running and planned tasks in time order and
// checks the share at every instant a planned task is running.
func (p *Planner) fitsThroughout(j *Job, s *schedule) bool {
	ev := p.sweep[:0]
	for _, r := range p.runs {
		ev = append(ev,
			sweepEvent{at: 0, stage: r.stage, delta: r.count},
			sweepEvent{at: r.rem, stage: r.stage, delta: -r.count})
	}
	for _, sl := range s.slots {
		end := sl.start + int64(j.stages[sl.stage].dur)
		ev = append(ev,
			sweepEvent{at: sl.start, stage: sl.stage, delta: sl.count, planned: true},
			sweepEvent{at: end, stage: sl.stage, delta: -sl.count, planned: true})
	}
	slices.SortFunc(ev, func(a, b sweepEvent) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	p.sweep = ev
	use := p.use
	clear(use)
	active := 0
	for i, e := range ev {
		use.addScaled(j.stages[e.stage].need, int64(e.delta))
		if e.planned {
			active += e.delta
		}
		if i+1 < len(ev) && ev[i+1].at == e.at {
			continue
		}
		if active > 0 && use.exceeds(j.capacity) {
			return false
		}
	}
	return true
}
