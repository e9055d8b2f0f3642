package altruism

import "sort"

// breakpoint is a change of the reverse pack's usage profile at reversed
// time at: usage changes by delta·need of stage, and done tasks of stage
// reach their reversed finish (which may release their parent stages).
type breakpoint struct {
	at    int64
	stage int
	delta int
	done  int
}

// reverse packs the remaining DAG backward from horizon T (docs/carbyne.md) and
// leaves the result in p.rev. Reversed time τ runs from 0 at T back towards
// now; a task placed at τ with duration d gets latest start T − τ − d. Edges
// are reversed, so a stage is ready once every unstarted child stage has
// been placed and has reached its reversed finish. Running tasks cannot
// move: they are reservations over [T − rem, T] in reversed time.
//
// The loop is the forward pack's, but a task fits at τ only if its demand
// plus the usage profile (placed tasks and reservations) stays within the
// share over the whole of [τ, τ + d). The result may overrun: a task placed
// after T − d gets a negative latest start, and verify rejects it.
func (p *Planner) reverse(j *Job, horizon int64) {
	p.rev.reset()
	p.rev.horizon = horizon
	p.bps = p.bps[:0]
	for _, r := range p.runs {
		p.insert(0, breakpoint{at: horizon - r.rem, stage: r.stage, delta: r.count})
		p.insert(0, breakpoint{at: horizon, stage: r.stage, delta: -r.count})
	}
	for i := range j.stages {
		s := &j.stages[i]
		p.left[i] = s.unstarted
		p.unf[i] = s.unstarted
		p.wait[i] = 0
		for _, c := range s.children {
			if j.stages[c].unstarted > 0 {
				p.wait[i]++
			}
		}
	}
	cur := p.used
	clear(cur)
	clear(p.blocked)
	head, round := 0, 0
	var tau int64
	for {
		round++
		for head < len(p.bps) && p.bps[head].at <= tau {
			b := p.bps[head]
			head++
			cur.addScaled(j.stages[b.stage].need, int64(b.delta))
			if b.done == 0 {
				continue
			}
			p.unf[b.stage] -= b.done
			if p.unf[b.stage] == 0 {
				for _, par := range j.stages[b.stage].parents {
					p.wait[par]--
				}
			}
		}
		for {
			best := p.pickReverse(j, head, tau, round)
			if best < 0 {
				break
			}
			s := &j.stages[best]
			p.left[best]--
			cur.addScaled(s.need, 1)
			p.insertFinish(head, tau+int64(s.dur), best)
			p.rev.add(best, horizon-tau-int64(s.dur), 1)
		}
		if head == len(p.bps) {
			return
		}
		tau = p.bps[head].at
	}
}

// pickReverse returns the ready stage whose task fits over its whole
// interval from tau and aligns best with the capacity left free over that
// interval, or -1. Ties are broken as in pickForward. A stage that does not
// fit is marked blocked for the round (decision point): placements only add
// usage, so it cannot fit again before tau moves on.
func (p *Planner) pickReverse(j *Job, head int, tau int64, round int) int {
	best, bestScore := -1, 0.0
	for _, si := range j.order {
		if p.left[si] == 0 || p.wait[si] > 0 || p.blocked[si] == round {
			continue
		}
		s := &j.stages[si]
		peak := p.peakOver(j, head, tau+int64(s.dur))
		if !s.need.fitsIn(peak, j.capacity) {
			p.blocked[si] = round
			continue
		}
		score := alignment(s.need, peak, j.capacity, p.invCap2)
		if best < 0 || score > bestScore || (score == bestScore && s.dur > j.stages[best].dur) {
			best, bestScore = si, score
		}
	}
	return best
}

// peakOver returns, per resource, the highest usage of the profile from the
// current reversed time up to (not including) until. Usage is checked only
// after all changes at one instant have been applied.
func (p *Planner) peakOver(j *Job, head int, until int64) vec {
	use, peak := p.use, p.peak
	copy(use, p.used)
	copy(peak, p.used)
	for i := head; i < len(p.bps) && p.bps[i].at < until; i++ {
		b := p.bps[i]
		use.addScaled(j.stages[b.stage].need, int64(b.delta))
		if i+1 < len(p.bps) && p.bps[i+1].at == b.at {
			continue
		}
		for r, x := range use {
			peak[r] = max(peak[r], x)
		}
	}
	return peak
}

// insertFinish records that one more task of stage ends at reversed time
// at, merging it into an existing finish breakpoint of that stage and time.
func (p *Planner) insertFinish(head int, at int64, stage int) {
	i := head + sort.Search(len(p.bps)-head, func(k int) bool { return p.bps[head+k].at > at })
	for k := i - 1; k >= head && p.bps[k].at == at; k-- {
		if p.bps[k].stage == stage && p.bps[k].done > 0 {
			p.bps[k].delta--
			p.bps[k].done++
			return
		}
	}
	p.insert(head, breakpoint{at: at, stage: stage, delta: -1, done: 1})
}

// insert adds b to the profile, after every breakpoint at the same time.
func (p *Planner) insert(head int, b breakpoint) {
	i := head + sort.Search(len(p.bps)-head, func(k int) bool { return p.bps[head+k].at > b.at })
	p.bps = append(p.bps, breakpoint{})
	copy(p.bps[i+1:], p.bps[i:])
	p.bps[i] = b
}
