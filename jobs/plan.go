package jobs

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// JobState is where a job is.
type JobState string

// Job states.
const (
	JobRunning  JobState = "running"
	JobComplete JobState = "complete" // a batch job whose every instance finished
	JobFailed   JobState = "failed"   // an instance used up its restarts (mode fail)
	JobStopped  JobState = "stopped"  // stopped by its owner
)

// Status is the runner's record of a job that the planner reads.
type Status struct {
	// Job is the version to run, numbered Version (from 1).
	Job     *Job
	Version int
	State   JobState
	// StableVersion is the last version every instance of which was
	// healthy at once (0: none yet); a failed update reverts to it.
	StableVersion int
	// UpdateFailed: the move to Version failed and was not reverted;
	// no more instances are replaced until a new version comes.
	UpdateFailed bool
	// NoRevert: Version is itself a revert, so a failure of it is not
	// reverted again.
	NoRevert bool
	// Restarts holds, per slot, when it was restarted, oldest first.
	Restarts map[Slot][]time.Time
}

// Launch is an instance to start now.
type Launch struct {
	Slot
	Version, Attempt int
}

// Decision is what the planner asks of the runner.
type Decision struct {
	Launch []Launch
	// Stop are instances to kill.
	Stop []Instance
	// Restarted are the slots among Launch restarted after an unplanned
	// end: their restart times are recorded.
	Restarted []Slot
	// State is the job's state from now on, with Message saying why when
	// it changed.
	State   JobState
	Message string
	// Stable is a version now healthy throughout (0: none new).
	Stable int
	// UpdateFailed: the update to the current version failed; Revert:
	// go back to StableVersion (auto_revert).
	UpdateFailed, Revert bool
	// Wake is when to plan again if nothing happens before (zero: on
	// events only).
	Wake time.Time
}

func (d *Decision) wakeBy(t time.Time) {
	if !t.IsZero() && (d.Wake.IsZero() || t.Before(d.Wake)) {
		d.Wake = t
	}
}

// Plan compares what runs of a job (every instance the runner knows,
// ended ones included) with what its status asks for and decides what to
// launch and stop. It is pure.
func Plan(st Status, instances []Instance, now time.Time) Decision {
	d := Decision{State: st.State}
	latest := map[Slot]Instance{}
	for _, in := range instances {
		if cur, ok := latest[in.Slot]; !ok || in.Attempt > cur.Attempt {
			latest[in.Slot] = in
		}
	}
	wanted := map[Slot]bool{}
	if st.State == JobRunning {
		for _, g := range st.Job.Groups {
			for i := range g.Count {
				wanted[Slot{g.Name, i}] = true
			}
		}
	}
	// Live instances no slot wants any more, or not their slot's latest.
	for _, in := range instances {
		if in.State.Ended() || in.Stopping {
			continue
		}
		if cur := latest[in.Slot]; !wanted[in.Slot] || cur.Attempt != in.Attempt {
			d.Stop = append(d.Stop, in)
		}
	}
	if st.State != JobRunning {
		return d
	}
	p := planner{st: st, now: now, d: &d, latest: latest}
	for _, g := range st.Job.Groups {
		for i := range g.Count {
			p.slot(g, Slot{g.Name, i})
		}
	}
	if d.State == JobRunning {
		p.update()
		p.settle()
	}
	return d
}

type planner struct {
	st     Status
	now    time.Time
	d      *Decision
	latest map[Slot]Instance
	// done counts finished batch slots; slots counts every slot.
	done, slots int
	// old are live instances of other versions, candidates for a
	// rolling update; unsettled counts slots moving to this version.
	old       []Instance
	unsettled int
}

func (p *planner) slot(g Group, s Slot) {
	p.slots++
	cur, ok := p.latest[s]
	switch {
	case !ok:
		p.launch(s, 0, false)
	case !cur.State.Ended():
		if cur.Stopping {
			p.unsettled++
			return
		}
		if cur.Version != p.st.Version {
			p.old = append(p.old, cur)
			return
		}
		p.checkSettled(cur)
	case cur.State == InstanceFinished && p.st.Job.Type == Batch:
		p.done++
	case cur.Stopping || cur.Lost || cur.Version != p.st.Version:
		// Stopped by the runner (an update, a new count), lost with its
		// agent, or of a version no longer run: replaced, not restarted.
		p.launch(s, cur.Attempt+1, false)
	default:
		if p.updating() {
			p.failUpdate(fmt.Sprintf("instance %s of v%d %s", cur.Slot, cur.Version, cur.State))
			if p.d.Revert {
				return
			}
		}
		p.restart(g, cur)
	}
}

// updating reports whether the job is moving from a stable version to
// this one and that move has not failed.
func (p *planner) updating() bool {
	return p.st.Job.Type == Service && p.st.StableVersion != 0 && p.st.StableVersion != p.st.Version && !p.st.UpdateFailed
}

// checkSettled counts an instance of the current version that is not yet
// healthy for long enough, and fails the update when it is past the
// deadline.
func (p *planner) checkSettled(in Instance) {
	u := p.st.Job.Update
	if in.Healthy && !p.now.Before(in.HealthySince.Add(u.MinHealthyTime)) {
		return
	}
	p.unsettled++
	if in.Healthy {
		p.d.wakeBy(in.HealthySince.Add(u.MinHealthyTime))
	}
	if p.updating() {
		deadline := in.StartedAt.Add(u.HealthyDeadline)
		if !p.now.Before(deadline) {
			p.failUpdate(fmt.Sprintf("instance %s of v%d not healthy within %v", in.Slot, in.Version, u.HealthyDeadline))
		} else {
			p.d.wakeBy(deadline)
		}
	}
}

func (p *planner) failUpdate(why string) {
	if p.d.UpdateFailed {
		return
	}
	p.d.UpdateFailed = true
	p.d.Message = "update failed: " + why
	if p.st.Job.Update.AutoRevert && !p.st.NoRevert {
		p.d.Revert = true
		p.d.Message += fmt.Sprintf("; reverting to v%d", p.st.StableVersion)
	}
}

func (p *planner) launch(s Slot, attempt int, restarted bool) {
	p.unsettled++
	p.d.Launch = append(p.d.Launch, Launch{Slot: s, Version: p.st.Version, Attempt: attempt})
	if restarted {
		p.d.Restarted = append(p.d.Restarted, s)
	}
}

// restart applies the group's restart policy to an instance that ended
// when it should not have.
func (p *planner) restart(g Group, cur Instance) {
	r := g.Restart
	var recent []time.Time
	for _, t := range p.st.Restarts[cur.Slot] {
		if p.now.Sub(t) < r.Interval {
			recent = append(recent, t)
		}
	}
	if len(recent) >= r.Attempts {
		if r.Mode == RestartFail || len(recent) == 0 {
			p.d.State = JobFailed
			p.d.Message = fmt.Sprintf("instance %s %s and used its %d restarts in %v", cur.Slot, cur.State, r.Attempts, r.Interval)
			return
		}
		p.d.wakeBy(recent[0].Add(r.Interval)) // delay mode: when the oldest leaves the window
		return
	}
	at := cur.EndedAt.Add(restartDelay(r, len(recent)))
	if p.now.Before(at) {
		p.d.wakeBy(at)
		return
	}
	p.launch(cur.Slot, cur.Attempt+1, true)
}

// restartDelay is the wait before restart n (0 first) of a slot.
func restartDelay(r Restart, n int) time.Duration {
	d := float64(r.Delay) * math.Pow(max(r.Backoff, 1), float64(n))
	if r.MaxDelay > 0 && d > float64(r.MaxDelay) {
		return r.MaxDelay
	}
	if d > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// update replaces instances of other versions, MaxParallel at a time,
// each after the last ones settled.
func (p *planner) update() {
	if len(p.old) == 0 || p.st.UpdateFailed || p.d.UpdateFailed {
		return
	}
	slices.SortFunc(p.old, func(a, b Instance) int {
		if a.Group != b.Group {
			return compareStrings(a.Group, b.Group)
		}
		return a.Index - b.Index
	})
	p.d.Stop = append(p.d.Stop, p.old[:max(0, min(len(p.old), p.st.Job.Update.MaxParallel-p.unsettled))]...)
}

// settle records what the job reached: a batch job complete, a version
// healthy throughout.
func (p *planner) settle() {
	if p.st.Job.Type == Batch && p.slots > 0 && p.done == p.slots {
		p.d.State, p.d.Message = JobComplete, fmt.Sprintf("all %d instances finished", p.slots)
		return
	}
	if p.st.Job.Type == Service && len(p.old) == 0 && p.unsettled == 0 && len(p.d.Launch) == 0 &&
		p.st.StableVersion != p.st.Version {
		p.d.Stable = p.st.Version
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
