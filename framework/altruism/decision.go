package altruism

import (
	"cmp"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Decision is the outcome of one plan of one job.
type Decision struct {
	// At is the time the plan was made; every offset below is from At.
	At time.Time
	// Altruistic reports whether the plan was altruistic. It is false when
	// the draw or the job made it greedy, or when Completion is Never.
	Altruistic bool
	// Completion is T_k: how long the job takes from At if it runs in its
	// current share, or Never if some task cannot fit in the share at all.
	Completion time.Duration
	// MustStart lists the runnable tasks to start now, most urgent first.
	// Together with the running tasks they fit in the share (unless running
	// tasks alone already exceed it, in which case MustStart is empty).
	MustStart []TaskID
	// Optional lists the other runnable tasks, most urgent first: work the
	// job would run early on leftover resources.
	Optional []TaskID
	// Tasks plans every unstarted task, runnable or not, in priority order.
	Tasks []TaskPlan
	// Leftover is L_k: the share minus the demand of running and must-start
	// tasks, per resource and never negative.
	Leftover protocol.Resources
	// RemainingWork is the job's remaining work in task-seconds: the
	// duration estimates of unstarted tasks plus the remaining time of
	// running ones.
	RemainingWork float64
	// NextReplan is the plan timer: the earliest latest start among the
	// optional tasks of an altruistic plan. The job should plan again then
	// if no other event comes first. Zero when there is none.
	NextReplan time.Time
}

// TaskPlan is the plan for one unstarted task.
type TaskPlan struct {
	Task TaskID
	// Demand is one task's demand. It is shared with the job and with other
	// plans: treat it as read-only.
	Demand protocol.Resources
	// LatestStart is how long after Decision.At the task may start at the
	// latest for the job to finish by Completion; 0 when Completion is
	// Never. Tasks order by it, then by the length of the longest chain of
	// work they lead (critical path), longest first.
	LatestStart time.Duration
	// Runnable reports whether every task of its parent stages has finished.
	Runnable bool
	// MustStart reports whether the task is in Decision.MustStart.
	MustStart bool
}

// Feasible reports whether the job can finish in its share at all.
func (d Decision) Feasible() bool { return d.Completion != Never }

// Deadline returns At + Completion, or the zero time when not Feasible.
func (d Decision) Deadline() time.Time {
	if !d.Feasible() {
		return time.Time{}
	}
	return d.At.Add(d.Completion)
}

// decide turns a chosen schedule into a Decision. A nil schedule means
// there is no finite plan (completion is Never) or nothing is left to plan.
// Must-start tasks are the runnable ones the schedule starts now when
// altruistic, and the forward pack's greedy set at time 0 otherwise.
func (p *Planner) decide(j *Job, now time.Time, chosen *schedule, completion time.Duration, altruistic bool) Decision {
	altruistic = altruistic && chosen != nil
	d := Decision{At: now, Altruistic: altruistic, Completion: completion}
	d.RemainingWork = p.remainingWork(j)

	must := p.ready // reused: must-start count per stage
	clear(must)
	source := &p.fwd
	if altruistic {
		source = chosen
	}
	if chosen != nil || completion == Never {
		for _, sl := range source.slots {
			if sl.start == 0 && j.stages[sl.stage].waiting == 0 {
				must[sl.stage] += sl.count
			}
		}
	}
	mustTotal, runnableTotal, unstartedTotal := 0, 0, 0
	for si := range j.stages {
		mustTotal += must[si]
		unstartedTotal += j.stages[si].unstarted
		if j.stages[si].waiting == 0 {
			runnableTotal += j.stages[si].unstarted
		}
	}
	p.rankStages(j)

	// Tasks of a stage are interchangeable and its slots are already in
	// start order, so order the slots (few) rather than the tasks (many),
	// then hand each slot the stage's next unstarted tasks by index.
	groups := p.groups[:0]
	if chosen != nil {
		groups = append(groups, chosen.slots...)
	} else {
		for si := range j.stages {
			if u := j.stages[si].unstarted; u > 0 {
				groups = append(groups, slot{stage: si, count: u})
			}
		}
	}
	slices.SortFunc(groups, func(a, b slot) int {
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		return cmp.Compare(p.rank[a.stage], p.rank[b.stage])
	})
	p.groups = groups
	next, taken := p.unf, p.wait // reused: per stage, next task index to look at and tasks handed out
	clear(next)
	clear(taken)
	d.Tasks = make([]TaskPlan, 0, unstartedTotal)
	for _, g := range groups {
		s := &j.stages[g.stage]
		for range g.count {
			for !s.tasks[next[g.stage]].state.unstarted() {
				next[g.stage]++
			}
			d.Tasks = append(d.Tasks, TaskPlan{
				Task:        TaskID{Stage: s.name, Index: next[g.stage]},
				Demand:      s.demand,
				LatestStart: time.Duration(g.start),
				Runnable:    s.waiting == 0,
				MustStart:   taken[g.stage] < must[g.stage],
			})
			next[g.stage]++
			taken[g.stage]++
		}
	}

	var timer time.Duration = -1
	d.MustStart = make([]TaskID, 0, mustTotal)
	d.Optional = make([]TaskID, 0, runnableTotal-mustTotal)
	for _, tp := range d.Tasks {
		switch {
		case tp.MustStart:
			d.MustStart = append(d.MustStart, tp.Task)
		case tp.Runnable:
			d.Optional = append(d.Optional, tp.Task)
			if altruistic && (timer < 0 || tp.LatestStart < timer) {
				timer = tp.LatestStart
			}
		}
	}
	if timer >= 0 {
		d.NextReplan = now.Add(timer)
	}
	d.Leftover = p.leftover(j, must)
	return d
}

// rankStages sets p.rank[s] to stage s's position when stages are ordered
// by critical path (CPM height: the longest chain of stage durations from s
// to a sink, s included), longest first, then by topological position.
func (p *Planner) rankStages(j *Job) {
	for k := len(j.order) - 1; k >= 0; k-- {
		si := j.order[k]
		var longest int64
		for _, c := range j.stages[si].children {
			longest = max(longest, p.height[c])
		}
		p.height[si] = int64(j.stages[si].dur) + longest
	}
	byRank := p.byRank[:0]
	byRank = append(byRank, j.order...)
	slices.SortStableFunc(byRank, func(a, b int) int { return cmp.Compare(p.height[b], p.height[a]) })
	p.byRank = byRank
	for r, si := range byRank {
		p.rank[si] = r
	}
}

// leftover returns the share minus running and must-start demand, clamped
// at zero per resource.
func (p *Planner) leftover(j *Job, must []int) protocol.Resources {
	out := j.share.Clone()
	for si := range j.stages {
		s := &j.stages[si]
		if n := s.running + must[si]; n > 0 {
			for name, v := range s.demand.Scalars {
				if out.Scalars == nil {
					out.Scalars = map[string]int64{}
				}
				out.Scalars[name] -= int64(n) * v
			}
		}
	}
	for name, v := range out.Scalars {
		if v <= 0 {
			delete(out.Scalars, name)
		}
	}
	return out
}

// remainingWork returns the job's remaining work in task-seconds.
func (p *Planner) remainingWork(j *Job) float64 {
	var total time.Duration
	for si := range j.stages {
		total += time.Duration(j.stages[si].unstarted) * j.stages[si].dur
	}
	for _, r := range p.runs {
		total += time.Duration(int64(r.count) * r.rem)
	}
	return total.Seconds()
}
