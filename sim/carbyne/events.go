package carbyne

import (
	"slices"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// finishTasks ends the tasks that end now.
func (e *engine) finishTasks() error {
	for next, ok := e.tasks.Peek(); ok && next.end == e.now; next, ok = e.tasks.Peek() {
		t := e.tasks.Pop()
		j := t.job
		st := &j.stage[t.stage]
		if err := e.alloc.Recover(j.fw, t.agent, st.demand); err != nil {
			return err
		}
		e.fair.advance(j, e.now)
		subVec(j.used, st.need)
		subVec(e.clusterUse, st.need)
		e.fair.set(j, e.now)
		st.running--
		st.finished++
		st.sumStart -= t.start
		if st.finished == st.tasks {
			for _, c := range st.children {
				j.stage[c].waiting--
			}
		}
		if j.plan != nil {
			if err := j.plan.TaskFinished(altruism.TaskID{Stage: st.name, Index: t.index}, e.at(e.now)); err != nil {
				return err
			}
		}
		j.replan, j.shareDirty = true, true
		if j.unfinished--; j.unfinished == 0 {
			if err := e.complete(j); err != nil {
				return err
			}
		}
	}
	return nil
}

// complete retires a finished job.
func (e *engine) complete(j *simJob) error {
	j.done, j.finish, j.replan, j.timer = true, e.now, false, -1
	e.jobsMoved = true
	e.active = slices.DeleteFunc(e.active, func(x *simJob) bool { return x == j })
	if _, err := e.alloc.RemoveFramework(j.fw); err != nil {
		return err
	}
	e.fair.entitle(j, nil, e.now)
	return e.shares.remove(j.fw)
}

// arrive admits the jobs that arrive now.
func (e *engine) arrive() error {
	for e.nextArrival < len(e.jobs) && e.jobs[e.nextArrival].spec.arrival == e.now {
		j := e.jobs[e.nextArrival]
		e.nextArrival++
		if err := e.alloc.AddFramework(offers.FrameworkInfo{ID: j.fw}); err != nil {
			return err
		}
		if e.shares != nil {
			if err := e.shares.add(j.fw); err != nil {
				return err
			}
		}
		j.arrived, j.replan, j.shareDirty = true, true, true
		e.active = append(e.active, j)
		e.jobsMoved = true
	}
	return nil
}

// setTimer arms j's plan timer at t if t is still to come.
func (e *engine) setTimer(j *simJob, t time.Duration) {
	if t <= e.now {
		return
	}
	j.timer = t
	e.timers.Push(timer{at: t, job: j.idx})
}

// simTask is a running task.
type simTask struct {
	end, start time.Duration
	job        *simJob
	stage      int
	index      int
	agent      protocol.AgentID
	seq        uint64
}

// endsFirst orders running tasks by end, tasks ending together by launch.
func endsFirst(a, b *simTask) bool {
	if a.end != b.end {
		return a.end < b.end
	}
	return a.seq < b.seq
}

// timer is a job's plan timer.
type timer struct {
	at  time.Duration
	job int
}

// firesFirst orders plan timers by instant, timers of one instant by job.
func firesFirst(a, b timer) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.job < b.job
}
