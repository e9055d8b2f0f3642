package altruism

import (
	"slices"
	"time"
)

// slot is count tasks of one stage planned to start together, start being
// an offset from the plan's now in nanoseconds. Tasks of a stage are
// interchangeable, so a schedule says how many start when, not which.
type slot struct {
	stage int
	start int64
	count int
}

// schedule is a start time for every unstarted task of a job, and the
// horizon T (offset from now) by which the job is meant to finish.
type schedule struct {
	slots   []slot
	horizon int64
}

func (s *schedule) reset() {
	s.slots = s.slots[:0]
	s.horizon = 0
}

// add plans count more tasks of stage at start, merging them into the last
// slot when that slot is the same stage and time (packers place runs of
// them).
func (s *schedule) add(stage int, start int64, count int) {
	if n := len(s.slots); n > 0 && s.slots[n-1].stage == stage && s.slots[n-1].start == start {
		s.slots[n-1].count += count
		return
	}
	s.slots = append(s.slots, slot{stage: stage, start: start, count: count})
}

// normalize sorts slots by stage, then start, and merges equal ones, the
// order every consumer of a finished schedule relies on.
func (s *schedule) normalize() {
	slices.SortFunc(s.slots, func(a, b slot) int {
		if a.stage != b.stage {
			return a.stage - b.stage
		}
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	out := s.slots[:0]
	for _, sl := range s.slots {
		if n := len(out); n > 0 && out[n-1].stage == sl.stage && out[n-1].start == sl.start {
			out[n-1].count += sl.count
			continue
		}
		out = append(out, sl)
	}
	s.slots = out
}

// commitment is the schedule the job's last plan published, in time
// relative to that plan. Planning against it again is what keeps T_k from
// drifting later between events: the packers are heuristics, and a fresh
// forward pack from a later state can come out worse than a schedule the
// job is already following.
type commitment struct {
	valid bool
	at    time.Time
	// deadline is T_k of that plan, as an offset from at.
	deadline int64
	// starts holds, per stage, the planned start offsets from at of the
	// stage's unstarted tasks, ascending.
	starts [][]int64
}

func (c *commitment) clear() { c.valid = false }

// record keeps sched, planned at now, as the job's commitment.
func (c *commitment) record(now time.Time, sched *schedule, stages int) {
	c.valid, c.at, c.deadline = true, now, sched.horizon
	if len(c.starts) != stages {
		c.starts = make([][]int64, stages)
	}
	for i := range c.starts {
		c.starts[i] = c.starts[i][:0]
	}
	for _, sl := range sched.slots {
		for range sl.count {
			c.starts[sl.stage] = append(c.starts[sl.stage], sl.start)
		}
	}
}

// load rebuilds the commitment as a schedule relative to now for the job's
// current unstarted tasks. Tasks started since the commitment took the
// earliest planned starts of their stage, so the remaining tasks keep the
// latest ones. It reports false when the commitment cannot cover the tasks
// (none recorded, or more unstarted tasks than planned, after a failure);
// whether the result is still feasible is for verify to say.
func (c *commitment) load(j *Job, now time.Time, out *schedule) bool {
	out.reset()
	if !c.valid || len(c.starts) != len(j.stages) {
		return false
	}
	shift := int64(now.Sub(c.at))
	out.horizon = c.deadline - shift
	for i := range j.stages {
		u := j.stages[i].unstarted
		planned := c.starts[i]
		if u > len(planned) {
			return false
		}
		for _, st := range planned[len(planned)-u:] {
			out.add(i, st-shift, 1)
		}
	}
	return true
}
