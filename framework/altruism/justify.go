package altruism

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// jpoint is a change of usage at time at (offset from now) by delta·need of
// stage, in the profile justify edits.
type jpoint struct {
	at    int64
	stage int
	delta int
}

// justify right-justifies a valid normalized schedule into p.jus: taking
// slots from the latest finish to the earliest, it moves each one as late as
// it can go while the schedule stays valid with the same horizon (before
// its child stages' first starts and the horizon, and within the share next
// to everything else). Children finish after their parents, so a slot's
// children are final when it moves. A slot only ever moves later, from a
// position that was valid, so the result is valid too.
//
// It is the fallback when the reverse pack overruns its horizon: the
// forward pack's schedule is valid but starts everything as early as it
// can, so without justification an overrun would turn the plan greedy.
// Slots move whole (a slot is tasks of one stage starting together): moving
// tasks one by one could defer a little more, at a cost quadratic in tasks
// rather than in slots.
func (p *Planner) justify(j *Job, in *schedule) {
	p.jus.reset()
	p.jus.horizon = in.horizon
	p.pts = p.pts[:0]
	for _, r := range p.runs {
		p.jadd(0, r.stage, r.count)
		p.jadd(r.rem, r.stage, -r.count)
	}
	for _, sl := range in.slots {
		p.jadd(sl.start, sl.stage, sl.count)
		p.jadd(sl.start+int64(j.stages[sl.stage].dur), sl.stage, -sl.count)
	}
	p.order = append(p.order[:0], in.slots...)
	slices.SortStableFunc(p.order, func(a, b slot) int {
		ea := a.start + int64(j.stages[a.stage].dur)
		eb := b.start + int64(j.stages[b.stage].dur)
		if ea != eb {
			return cmp.Compare(eb, ea)
		}
		return cmp.Compare(j.stages[b.stage].topo, j.stages[a.stage].topo)
	})
	for i := range j.stages {
		p.first[i] = in.horizon
	}
	for _, sl := range p.order {
		s := &j.stages[sl.stage]
		dur := int64(s.dur)
		latest := in.horizon
		for _, c := range s.children {
			latest = min(latest, p.first[c])
		}
		p.jadd(sl.start, sl.stage, -sl.count)
		p.jadd(sl.start+dur, sl.stage, sl.count)
		start := sl.start
		if latest-dur > sl.start {
			start = p.latestFit(j, sl.start, latest-dur, dur, s.need, int64(sl.count))
		}
		p.jadd(start, sl.stage, sl.count)
		p.jadd(start+dur, sl.stage, -sl.count)
		p.first[sl.stage] = min(p.first[sl.stage], start)
		p.jus.add(sl.stage, start, sl.count)
	}
	p.jus.normalize()
}

// latestFit returns the latest start in [lo, hi] at which count tasks of
// demand need and duration dur fit next to the usage profile throughout
// their run; lo is known to fit. It walks the profile backward once from
// hi + dur: each stretch where the tasks do not fit pulls their end back to
// the stretch's start, and the first gap of length dur is the answer.
func (p *Planner) latestFit(j *Job, lo, hi, dur int64, need vec, count int64) int64 {
	end := hi + dur
	// The usage just before end is the sum of the changes before end, or
	// minus the sum of those from end on, as every task's changes sum to
	// zero: add up whichever side is shorter.
	use := p.use
	clear(use)
	i := sort.Search(len(p.pts), func(k int) bool { return p.pts[k].at >= end })
	if i <= len(p.pts)/2 {
		for _, pt := range p.pts[:i] {
			use.addScaled(j.stages[pt.stage].need, int64(pt.delta))
		}
	} else {
		for _, pt := range p.pts[i:] {
			use.addScaled(j.stages[pt.stage].need, -int64(pt.delta))
		}
	}
	use.addScaled(need, count)
	// Walk the stretches [from, to) of constant usage backward from end.
	for k := i - 1; ; {
		from := int64(math.MinInt64)
		if k >= 0 {
			from = p.pts[k].at
		}
		if use.exceeds(j.capacity) {
			if k < 0 || from-dur <= lo {
				return lo
			}
			end = from
		} else if from <= end-dur {
			return max(end-dur, lo)
		}
		for ; k >= 0 && p.pts[k].at == from; k-- {
			use.addScaled(j.stages[p.pts[k].stage].need, -int64(p.pts[k].delta))
		}
	}
}

// jadd changes the usage profile by delta tasks of stage from time at,
// merging with the point of that stage and time if there is one.
func (p *Planner) jadd(at int64, stage, delta int) {
	i := sort.Search(len(p.pts), func(k int) bool {
		pk := p.pts[k]
		return pk.at > at || (pk.at == at && pk.stage >= stage)
	})
	if i < len(p.pts) && p.pts[i].at == at && p.pts[i].stage == stage {
		p.pts[i].delta += delta
		if p.pts[i].delta == 0 {
			p.pts = slices.Delete(p.pts, i, i+1)
		}
		return
	}
	p.pts = slices.Insert(p.pts, i, jpoint{at: at, stage: stage, delta: delta})
}
