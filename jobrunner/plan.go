package jobrunner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// plan runs the planner over every job and carries out its decisions
// that need no I/O; kills, records and reverts follow outside the lock.
func (r *Runner) plan(ctx context.Context, now time.Time) {
	r.mu.Lock()
	var reverts []*jobRun
	for _, name := range sortedKeys(r.jobs) {
		jr := r.jobs[name]
		if jr.job == nil {
			continue
		}
		if r.planJob(jr, now) {
			reverts = append(reverts, jr)
		}
	}
	r.mu.Unlock()
	for _, jr := range reverts {
		r.revert(ctx, jr)
	}
}

// planJob plans one job; it reports whether a failed update asks for a
// revert.
func (r *Runner) planJob(jr *jobRun, now time.Time) bool {
	if jr.job.Periodic != nil {
		r.schedule(jr, now)
		return false
	}
	for _, in := range jr.insts {
		if !in.adopted {
			continue
		}
		if now.Sub(jr.adoptedAt) < adoptTimeout {
			return false // wait for the master's word on what runs
		}
		in.adopted, in.State, in.EndedAt, in.message = false, jobs.InstanceFailed, now, "not confirmed by the master"
	}
	st := jobs.Status{Job: jr.job, Version: jr.spec.Version, State: jr.status.State, StableVersion: jr.status.StableVersion,
		UpdateFailed: jr.status.UpdateFailed, NoRevert: jr.spec.Revert, Restarts: map[jobs.Slot][]time.Time{}}
	if jr.status.Version != jr.spec.Version || st.State == "" || st.State == jobs.JobStopped {
		st.State, st.UpdateFailed = jobs.JobRunning, false // a new version starts afresh
	}
	if jr.spec.Stopped {
		st.State = jobs.JobStopped
	}
	for slot, times := range jr.status.Restarts {
		s := parseSlot(slot)
		for _, t := range times {
			st.Restarts[s] = append(st.Restarts[s], time.Unix(0, t))
		}
	}
	var list []jobs.Instance
	for _, in := range jr.insts {
		list = append(list, in.Instance)
	}
	d := jobs.Plan(st, list, now)
	for _, l := range d.Launch {
		r.launch(jr, l, now)
	}
	for _, s := range d.Stop {
		r.stop(jr, s, now)
	}
	rec := jr.status
	if rec.Version != jr.spec.Version {
		rec.Message = "" // said of another version
	}
	rec.Version, rec.State, rec.UpdateFailed = jr.spec.Version, d.State, st.UpdateFailed || d.UpdateFailed
	if d.Message != "" {
		rec.Message = d.Message
	}
	if d.Stable != 0 {
		rec.StableVersion, rec.Message = d.Stable, fmt.Sprintf("version %d healthy in every instance", d.Stable)
	}
	if len(d.Restarted) > 0 {
		rec.Restarts = mapsClone(rec.Restarts)
		for _, s := range d.Restarted {
			times := append(rec.Restarts[s.String()], now.UnixNano())
			rec.Restarts[s.String()] = times[max(0, len(times)-20):]
		}
	}
	if d.State != jr.status.State && d.Message != "" {
		r.log.Info("job state", "job", jr.name, "state", d.State, "message", d.Message)
	}
	if !statusEqual(rec, jr.status) {
		jr.status, jr.statusDirty = rec, true
	}
	r.prune(jr)
	if d.Revert {
		jr.revertTo = jr.status.StableVersion
		return true
	}
	return false
}

// launch records a new instance; it is placed on an offer once the store
// holds it.
func (r *Runner) launch(jr *jobRun, l jobs.Launch, now time.Time) {
	g := groupOf(jr.job, l.Group)
	in := &instance{Instance: jobs.Instance{Slot: l.Slot, Version: l.Version, Attempt: l.Attempt, State: jobs.InstanceStarting, StartedAt: now},
		job: jr.name, role: jr.job.Role, group: g, tasks: map[protocol.TaskID]protocol.TaskStatus{}}
	in.id = in.ID(jr.name)
	in.checked = map[protocol.TaskID]bool{}
	for _, t := range g.Tasks {
		id := taskID(in.id, t.Name)
		in.taskIDs = append(in.taskIDs, id)
		in.checked[id] = t.Check != nil
	}
	jr.insts[in.id], jr.liveDirty = in, true
}

// stop kills an instance's tasks, or drops it if it was never placed.
func (r *Runner) stop(jr *jobRun, which jobs.Instance, now time.Time) {
	var in *instance
	for _, c := range jr.insts {
		if c.Slot == which.Slot && c.Attempt == which.Attempt {
			in = c
		}
	}
	if in == nil || in.Stopping {
		return
	}
	in.Stopping, jr.liveDirty = true, true
	if !in.placed {
		in.State, in.EndedAt = jobs.InstanceFailed, now
		return
	}
	for _, t := range in.taskIDs {
		if st, ok := in.tasks[t]; !ok || !st.State.Terminal() {
			r.kills = append(r.kills, pendingKill{role: in.role, task: t, agent: in.agent})
		}
	}
}

// prune forgets ended instances a later attempt of their slot replaced,
// and those the runner stopped itself (a count lowered, an old version
// replaced, the job stopped): their end was asked for, and their task IDs,
// which name their version, are never planned again.
func (r *Runner) prune(jr *jobRun) {
	latest := map[jobs.Slot]int{}
	for _, in := range jr.insts {
		latest[in.Slot] = max(latest[in.Slot], in.Attempt)
	}
	for id, in := range jr.insts {
		if in.State.Ended() && (in.Attempt < latest[in.Slot] || in.Stopping) {
			delete(jr.insts, id)
			jr.liveDirty = true
		}
	}
}

// revert makes the last stable version the job's next one.
func (r *Runner) revert(ctx context.Context, jr *jobRun) {
	r.mu.Lock()
	name, to := jr.name, jr.revertTo
	r.mu.Unlock()
	next, err := jobs.AutoRevert(ctx, r.store, name, to, time.Now())
	if err != nil {
		r.log.Warn("cannot revert", "job", name, "version", to, "error", err)
		return
	}
	r.log.Info("update failed: reverted", "job", name, "to", to, "as_version", next)
	r.poke()
}

func groupOf(j *jobs.Job, name string) *jobs.Group {
	for i := range j.Groups {
		if j.Groups[i].Name == name {
			return &j.Groups[i]
		}
	}
	return nil
}

func parseSlot(s string) jobs.Slot {
	i := strings.LastIndexByte(s, '/')
	var idx int
	_, _ = fmt.Sscan(s[i+1:], &idx)
	return jobs.Slot{Group: s[:max(i, 0)], Index: idx}
}

func statusEqual(a, b jobs.StatusRecord) bool {
	if a.Version != b.Version || a.State != b.State || a.Message != b.Message || a.StableVersion != b.StableVersion ||
		a.UpdateFailed != b.UpdateFailed || !a.LastRun.Equal(b.LastRun) || len(a.Restarts) != len(b.Restarts) {
		return false
	}
	for k, v := range a.Restarts {
		if !slices.Equal(v, b.Restarts[k]) {
			return false
		}
	}
	return true
}

func mapsClone(m map[string][]int64) map[string][]int64 {
	out := make(map[string][]int64, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// keepInPlace makes the live instances whose version's group the new
// version changed at most in count (olds holds those versions' jobs) count
// as the new version: a new count starts or stops instances, and a
// version equal to an older one (a revert) replaces none of that one's.
func keepInPlace(jr *jobRun, next *jobs.Job, version int, olds map[int]*jobs.Job) {
	for _, in := range jr.insts {
		old := olds[in.Version]
		if in.State.Ended() || in.Stopping || old == nil || old.Role != next.Role || old.Type != next.Type {
			continue
		}
		was, now := groupOf(old, in.Group), groupOf(next, in.Group)
		if was != nil && now != nil && jobs.SameButCount(*was, *now) {
			in.Version, in.group = version, now
			jr.liveDirty = true
		}
	}
}
