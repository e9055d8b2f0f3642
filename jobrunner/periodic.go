package jobrunner

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/allot-project/allot/jobs"
)

// keepRuns is how many ended runs of a periodic job the store keeps.
const keepRuns = 5

// schedule fires a periodic job: when its schedule's next time since the
// last run has come, it asks for a run (a batch job of the same version,
// named job-UNIXTIME), unless overlap is prohibited and a run still goes.
// A runner that was down fires once for the runs it missed.
func (r *Runner) schedule(jr *jobRun, now time.Time) {
	rec := jr.status
	if rec.Version != jr.spec.Version {
		rec.Message = ""
	}
	rec.Version, rec.State = jr.spec.Version, jobs.JobRunning
	if jr.spec.Stopped {
		rec.State = jobs.JobStopped
	}
	from := rec.LastRun
	if from.IsZero() {
		from = jr.spec.UpdatedAt
	}
	next := jr.job.Periodic.Next(from)
	if rec.State == jobs.JobRunning && !next.IsZero() && !now.Before(next) {
		rec.LastRun = now
		if running := r.runningRun(jr.name); running != "" && jr.job.Periodic.ProhibitOverlap {
			rec.Message = fmt.Sprintf("run at %s skipped: %s still runs", next.Format(time.RFC3339), running)
		} else {
			run := jr.name + "-" + strconv.FormatInt(next.Unix(), 10)
			r.runs = append(r.runs, periodicRun{parent: jr.name, version: jr.spec.Version, name: run, at: now})
			rec.Message = "launched " + run
		}
	}
	if !statusEqual(rec, jr.status) {
		jr.status, jr.statusDirty = rec, true
	}
}

// runningRun names a run of parent that has not ended, or "".
func (r *Runner) runningRun(parent string) string {
	for _, name := range sortedKeys(r.jobs) {
		jr := r.jobs[name]
		if jr.spec.Parent == parent && jr.status.State != jobs.JobComplete && jr.status.State != jobs.JobFailed && !jr.spec.Stopped {
			return name
		}
	}
	for _, run := range r.runs {
		if run.parent == parent {
			return run.name
		}
	}
	return ""
}

// periodicRun is a run a schedule fired, to be written to the store.
type periodicRun struct {
	parent, name string
	version      int
	at           time.Time
}

// startRuns writes the runs schedules fired as jobs of their own, and
// deletes the oldest ended runs beyond keepRuns.
func (r *Runner) startRuns(ctx context.Context) {
	r.mu.Lock()
	runs := r.runs
	r.runs = nil
	ended := map[string][]string{}
	for _, name := range sortedKeys(r.jobs) {
		jr := r.jobs[name]
		if p := jr.spec.Parent; p != "" && (jr.status.State == jobs.JobComplete || jr.status.State == jobs.JobFailed) {
			ended[p] = append(ended[p], name)
		}
	}
	r.mu.Unlock()
	for _, run := range runs {
		spec := jobs.SpecRecord{Version: 1, Versions: []int{1}, Parent: run.parent, ParentVersion: run.version, UpdatedAt: run.at}
		if err := jobs.WriteSpec(ctx, r.store, run.name, spec, 0); err != nil {
			r.log.Warn("cannot start a periodic run", "job", run.parent, "run", run.name, "error", err)
			continue
		}
		r.log.Info("periodic run", "job", run.parent, "run", run.name)
	}
	for _, names := range ended {
		slices.Sort(names) // by the time in their names
		for _, name := range names[:max(0, len(names)-keepRuns)] {
			r.forget(ctx, name)
		}
	}
}

// forget deletes an ended run from the store and from the runner.
func (r *Runner) forget(ctx context.Context, name string) {
	for _, k := range []string{jobs.SpecKey(name), jobs.StatusKey(name), jobs.LiveKey(name)} {
		if _, err := r.store.Delete(ctx, k, 0); err != nil {
			r.log.Warn("cannot delete an old run", "run", name, "error", err)
			return
		}
	}
	r.mu.Lock()
	delete(r.jobs, name)
	r.mu.Unlock()
}
