package jobs

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func serviceJob(count int) *Job {
	return &Job{Name: "web", Type: Service, Update: Update{MaxParallel: 1, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute, AutoRevert: true},
		Groups: []Group{{Name: "g", Count: count, Restart: Restart{Attempts: 2, Interval: 10 * time.Minute, Delay: 5 * time.Second, Backoff: 2, Mode: RestartFail},
			Tasks: []Task{{Name: "t", Command: "x"}}}}}
}

// healthy is an instance healthy since long enough ago.
func healthy(idx, version int) Instance {
	return Instance{Slot: Slot{"g", idx}, Version: version, State: InstanceRunning, Healthy: true,
		StartedAt: t0.Add(-time.Hour), HealthySince: t0.Add(-time.Hour)}
}

func launches(d Decision) []string {
	var out []string
	for _, l := range d.Launch {
		out = append(out, Instance{Slot: l.Slot, Version: l.Version, Attempt: l.Attempt}.ID("web"))
	}
	return out
}

func stops(d Decision) []string {
	var out []string
	for _, in := range d.Stop {
		out = append(out, in.ID("web"))
	}
	return out
}

func TestPlan_newServiceLaunchesEverySlot(t *testing.T) {
	t.Parallel()
	d := Plan(Status{Job: serviceJob(3), Version: 1, State: JobRunning}, nil, t0)
	if got, want := launches(d), []string{"web.g.0.v1.0", "web.g.1.v1.0", "web.g.2.v1.0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("launches %v, want %v", got, want)
	}
	if d.Stable != 0 || len(d.Stop) != 0 || len(d.Restarted) != 0 {
		t.Errorf("got %+v", d)
	}
}

func TestPlan_stableOnceHealthyLongEnough(t *testing.T) {
	t.Parallel()
	st := Status{Job: serviceJob(2), Version: 1, State: JobRunning}
	young := healthy(1, 1)
	young.HealthySince = t0.Add(-3 * time.Second)
	d := Plan(st, []Instance{healthy(0, 1), young}, t0)
	if d.Stable != 0 || len(d.Launch) != 0 || !d.Wake.Equal(t0.Add(7*time.Second)) {
		t.Errorf("one healthy for 3 s of 10: got %+v, want no stable version and a wake in 7 s", d)
	}
	d = Plan(st, []Instance{healthy(0, 1), healthy(1, 1)}, t0)
	if d.Stable != 1 || len(d.Launch)+len(d.Stop) != 0 {
		t.Errorf("both healthy: got %+v, want v1 stable and nothing to do", d)
	}
}

func TestPlan_restartPolicy(t *testing.T) {
	t.Parallel()
	job := serviceJob(1)
	failed := Instance{Slot: Slot{"g", 0}, Version: 1, Attempt: 2, State: InstanceFailed, EndedAt: t0}
	st := Status{Job: job, Version: 1, State: JobRunning, StableVersion: 1, Restarts: map[Slot][]time.Time{}}

	// First restart after the delay, 5 s.
	d := Plan(st, []Instance{failed}, t0.Add(time.Second))
	if len(d.Launch) != 0 || !d.Wake.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("before the delay: %+v", d)
	}
	d = Plan(st, []Instance{failed}, t0.Add(5*time.Second))
	if got := launches(d); !reflect.DeepEqual(got, []string{"web.g.0.v1.3"}) || !reflect.DeepEqual(d.Restarted, []Slot{{"g", 0}}) {
		t.Fatalf("after the delay: %+v", d)
	}
	// The second waits 5 s times the backoff of 2.
	st.Restarts[Slot{"g", 0}] = []time.Time{t0.Add(-time.Minute)}
	if d = Plan(st, []Instance{failed}, t0.Add(9*time.Second)); len(d.Launch) != 0 || !d.Wake.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("second restart before 10 s: %+v", d)
	}
	// Restarts older than the interval no longer count.
	st.Restarts[Slot{"g", 0}] = []time.Time{t0.Add(-time.Hour), t0.Add(-time.Hour)}
	if d = Plan(st, []Instance{failed}, t0.Add(5*time.Second)); len(d.Launch) != 1 {
		t.Fatalf("old restarts counted: %+v", d)
	}
	// Attempts used up: mode fail fails the job.
	st.Restarts[Slot{"g", 0}] = []time.Time{t0.Add(-2 * time.Minute), t0.Add(-time.Minute)}
	d = Plan(st, []Instance{failed}, t0.Add(time.Hour/10))
	if d.State != JobFailed || len(d.Launch) != 0 || !strings.Contains(d.Message, "g/0 failed and used its 2 restarts") {
		t.Fatalf("restarts used up, mode fail: %+v", d)
	}
	// Mode delay waits for the oldest restart to leave the window.
	job.Groups[0].Restart.Mode = RestartDelay
	d = Plan(st, []Instance{failed}, t0.Add(time.Minute))
	if d.State != JobRunning || len(d.Launch) != 0 || !d.Wake.Equal(t0.Add(8*time.Minute)) {
		t.Fatalf("restarts used up, mode delay: %+v", d)
	}
}

func TestRestartDelay_backoffCapped(t *testing.T) {
	t.Parallel()
	r := Restart{Delay: time.Second, Backoff: 3, MaxDelay: 20 * time.Second}
	var got []time.Duration
	for n := range 5 {
		got = append(got, restartDelay(r, n))
	}
	want := []time.Duration{time.Second, 3 * time.Second, 9 * time.Second, 20 * time.Second, 20 * time.Second}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if d := restartDelay(Restart{Delay: time.Hour, Backoff: 100}, 100); d <= 0 {
		t.Errorf("an overflowing delay: %v", d)
	}
}

func TestPlan_batch(t *testing.T) {
	t.Parallel()
	job := serviceJob(3)
	job.Type = Batch
	st := Status{Job: job, Version: 1, State: JobRunning}
	finished := func(i int) Instance {
		return Instance{Slot: Slot{"g", i}, Version: 1, State: InstanceFinished, EndedAt: t0}
	}
	failed := Instance{Slot: Slot{"g", 2}, Version: 1, State: InstanceFailed, EndedAt: t0.Add(-time.Minute)}
	d := Plan(st, []Instance{finished(0), finished(1), failed}, t0)
	if got := launches(d); !reflect.DeepEqual(got, []string{"web.g.2.v1.1"}) || d.State != JobRunning {
		t.Fatalf("a failed batch instance: %+v", d)
	}
	d = Plan(st, []Instance{finished(0), finished(1), finished(2)}, t0)
	if d.State != JobComplete || len(d.Launch) != 0 {
		t.Fatalf("all finished: %+v", d)
	}
}

func TestPlan_countChanges(t *testing.T) {
	t.Parallel()
	running := []Instance{healthy(0, 1), healthy(1, 1), healthy(2, 1)}
	d := Plan(Status{Job: serviceJob(1), Version: 1, State: JobRunning}, running, t0)
	if got := stops(d); !reflect.DeepEqual(got, []string{"web.g.1.v1.0", "web.g.2.v1.0"}) || len(d.Launch) != 0 {
		t.Errorf("count 3 to 1: %+v", d)
	}
	d = Plan(Status{Job: serviceJob(4), Version: 1, State: JobRunning}, running, t0)
	if got := launches(d); !reflect.DeepEqual(got, []string{"web.g.3.v1.0"}) || len(d.Stop) != 0 {
		t.Errorf("count 3 to 4: %+v", d)
	}
	// A group gone from the job: its instances stop.
	job := serviceJob(1)
	job.Groups[0].Name = "h"
	d = Plan(Status{Job: job, Version: 2, State: JobRunning}, running[:1], t0)
	if got := stops(d); !reflect.DeepEqual(got, []string{"web.g.0.v1.0"}) {
		t.Errorf("group renamed: stops %v", got)
	}
	// A stopped job stops everything and launches nothing.
	d = Plan(Status{Job: serviceJob(3), Version: 1, State: JobStopped}, running, t0)
	if len(d.Stop) != 3 || len(d.Launch) != 0 || d.State != JobStopped {
		t.Errorf("stopped: %+v", d)
	}
}

func TestPlan_rollingUpdate(t *testing.T) {
	t.Parallel()
	st := Status{Job: serviceJob(3), Version: 2, State: JobRunning, StableVersion: 1}
	old := []Instance{healthy(0, 1), healthy(1, 1), healthy(2, 1)}

	// One at a time: the first old instance is stopped.
	d := Plan(st, old, t0)
	if got := stops(d); !reflect.DeepEqual(got, []string{"web.g.0.v1.0"}) || len(d.Launch) != 0 {
		t.Fatalf("start: %+v", d)
	}
	// While it stops, nothing else.
	old[0].Stopping = true
	if d = Plan(st, old, t0); len(d.Stop)+len(d.Launch) != 0 {
		t.Fatalf("while stopping: %+v", d)
	}
	// Once it ended, its slot gets v2, not counted as a restart.
	old[0].State, old[0].EndedAt = InstanceFailed, t0
	d = Plan(st, old, t0)
	if got := launches(d); !reflect.DeepEqual(got, []string{"web.g.0.v2.1"}) || len(d.Restarted) != 0 || len(d.Stop) != 0 {
		t.Fatalf("after the stop: %+v", d)
	}
	// The new one runs but is not healthy long enough: the next waits.
	fresh := Instance{Slot: Slot{"g", 0}, Version: 2, Attempt: 1, State: InstanceRunning, Healthy: true, StartedAt: t0, HealthySince: t0.Add(2 * time.Second)}
	all := append(old, fresh)
	if d = Plan(st, all, t0.Add(5*time.Second)); len(d.Stop)+len(d.Launch) != 0 || !d.Wake.Equal(t0.Add(12*time.Second)) {
		t.Fatalf("new one healthy for 3 s: %+v", d)
	}
	// Healthy for 10 s: the next old one goes.
	d = Plan(st, all, t0.Add(12*time.Second))
	if got := stops(d); !reflect.DeepEqual(got, []string{"web.g.1.v1.0"}) {
		t.Fatalf("new one settled: stops %v", got)
	}
	// Two in parallel when allowed.
	st.Job.Update.MaxParallel = 2
	if d = Plan(st, all, t0.Add(12*time.Second)); len(d.Stop) != 2 {
		t.Fatalf("max_parallel 2: stops %v", stops(d))
	}
}

func TestPlan_failedUpdateReverts(t *testing.T) {
	t.Parallel()
	st := Status{Job: serviceJob(3), Version: 2, State: JobRunning, StableVersion: 1}
	stuck := Instance{Slot: Slot{"g", 0}, Version: 2, Attempt: 1, State: InstanceRunning, StartedAt: t0}
	instances := []Instance{stuck, healthy(1, 1), healthy(2, 1)}
	if d := Plan(st, instances, t0.Add(30*time.Second)); d.UpdateFailed || !d.Wake.Equal(t0.Add(time.Minute)) {
		t.Fatalf("before the deadline: %+v", d)
	}
	d := Plan(st, instances, t0.Add(time.Minute))
	if !d.UpdateFailed || !d.Revert || len(d.Stop) != 0 || !strings.Contains(d.Message, "reverting to v1") {
		t.Fatalf("past the deadline: %+v", d)
	}
	// Without auto_revert the update stops where it is.
	st.Job.Update.AutoRevert = false
	if d := Plan(st, instances, t0.Add(time.Minute)); !d.UpdateFailed || d.Revert || len(d.Stop) != 0 {
		t.Fatalf("no auto_revert: %+v", d)
	}
	st.UpdateFailed = true
	if d := Plan(st, instances, t0.Add(2*time.Minute)); len(d.Stop) != 0 || d.UpdateFailed {
		t.Fatalf("after a failed update: %+v", d)
	}
	// A new instance that fails outright fails the update too, and is
	// not restarted when the job reverts.
	st = Status{Job: serviceJob(3), Version: 2, State: JobRunning, StableVersion: 1}
	crashed := stuck
	crashed.State, crashed.EndedAt = InstanceFailed, t0.Add(time.Second)
	d = Plan(st, []Instance{crashed, healthy(1, 1), healthy(2, 1)}, t0.Add(10*time.Second))
	if !d.Revert || len(d.Launch) != 0 {
		t.Fatalf("crashed new instance: %+v", d)
	}
	// A revert's own failure is not reverted again.
	st.NoRevert = true
	if d = Plan(st, []Instance{crashed, healthy(1, 1), healthy(2, 1)}, t0.Add(10*time.Second)); d.Revert || !d.UpdateFailed {
		t.Fatalf("failed revert: %+v", d)
	}
}

func TestInstanceID_roundTrip(t *testing.T) {
	t.Parallel()
	in := Instance{Slot: Slot{"front-end", 12}, Version: 3, Attempt: 4}
	job, got, ok := ParseInstanceID(in.ID("web_2"))
	if !ok || job != "web_2" || got != in {
		t.Errorf("got %q %+v %v", job, got, ok)
	}
	for _, bad := range []string{"", "a.b.c.d", "a.b.-1.v1.0", "a.b.1.1.0", "a.b.1.v0.0", "a.b.1.v1.x", "a.b.c.1.v1.0"} {
		if _, _, ok := ParseInstanceID(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestPlan_lostIsReplacedAtOnce: an instance lost with its agent is
// replaced at once and uses no restart, even when its restarts are used up.
func TestPlan_lostIsReplacedAtOnce(t *testing.T) {
	t.Parallel()
	lost := Instance{Slot: Slot{"g", 0}, Version: 1, Attempt: 4, State: InstanceFailed, Lost: true, EndedAt: t0}
	st := Status{Job: serviceJob(1), Version: 1, State: JobRunning, StableVersion: 1,
		Restarts: map[Slot][]time.Time{{"g", 0}: {t0.Add(-2 * time.Minute), t0.Add(-time.Minute)}}}
	d := Plan(st, []Instance{lost}, t0)
	if got := launches(d); !reflect.DeepEqual(got, []string{"web.g.0.v1.5"}) || len(d.Restarted) != 0 || d.State != JobRunning {
		t.Fatalf("lost: %+v", d)
	}
}
