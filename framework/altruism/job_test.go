package altruism

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

func stageSpec(name string, parents ...string) StageSpec {
	return StageSpec{Name: name, Tasks: 2, Demand: cpus(100), Duration: time.Second, Parents: parents}
}

func TestNewJob_ValidationErrors(t *testing.T) {
	t.Parallel()
	withPorts := cpus(100)
	withPorts.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: 31000, End: 31001}}}
	tests := []struct {
		name   string
		stages []StageSpec
		want   error
	}{
		{"no stages", nil, ErrNoStages},
		{"empty name", []StageSpec{stageSpec("")}, ErrInvalidStage},
		{"no tasks", []StageSpec{{Name: "a", Demand: cpus(1), Duration: time.Second}}, ErrInvalidStage},
		{"duplicate", []StageSpec{stageSpec("a"), stageSpec("a")}, ErrDuplicateStage},
		{"unknown parent", []StageSpec{stageSpec("a", "b")}, ErrUnknownStage},
		{"self loop", []StageSpec{stageSpec("a", "a")}, ErrCycle},
		{"cycle", []StageSpec{stageSpec("a", "c"), stageSpec("b", "a"), stageSpec("c", "b"), stageSpec("d")}, ErrCycle},
		{"negative duration", []StageSpec{{Name: "a", Tasks: 1, Duration: -time.Second}}, ErrInvalidDuration},
		{"zero duration", []StageSpec{{Name: "a", Tasks: 1}}, ErrInvalidDuration},
		{"negative demand", []StageSpec{{Name: "a", Tasks: 1, Duration: time.Second, Demand: cpus(-1)}}, ErrInvalidDemand},
		{"bad resource name", []StageSpec{{Name: "a", Tasks: 1, Duration: time.Second,
			Demand: protocol.Scalars(map[string]int64{"CPU!": 1})}}, ErrInvalidDemand},
		{"range demand", []StageSpec{{Name: "a", Tasks: 1, Duration: time.Second, Demand: withPorts}}, ErrInvalidDemand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewJob(JobSpec{Stages: tc.stages})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestNewJob_DiamondAndDuplicateParents(t *testing.T) {
	t.Parallel()
	j, err := NewJob(JobSpec{Stages: []StageSpec{
		stageSpec("join", "left", "right", "left"), stageSpec("left", "src"), stageSpec("right", "src"), stageSpec("src"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Declared out of order: the topological order still puts src first
	// and join last.
	got := []string{}
	for _, si := range j.order {
		got = append(got, j.stages[si].name)
	}
	if want := []string{"src", "left", "right", "join"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if n := len(j.stages[0].parents); n != 2 {
		t.Fatalf("join has %d parents, want 2 (duplicates dropped)", n)
	}
}

func TestJob_EventErrors(t *testing.T) {
	t.Parallel()
	t0 := propStart
	j, err := NewJob(JobSpec{Stages: []StageSpec{stageSpec("a"), stageSpec("b", "a")}})
	if err != nil {
		t.Fatal(err)
	}
	a0, a1, b0 := TaskID{"a", 0}, TaskID{"a", 1}, TaskID{"b", 0}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"unknown stage", func() error { return j.TaskStarted(TaskID{"zz", 0}, t0) }, ErrUnknownStage},
		{"index too high", func() error { return j.TaskStarted(TaskID{"a", 2}, t0) }, ErrUnknownTask},
		{"negative index", func() error { return j.TaskStarted(TaskID{"a", -1}, t0) }, ErrUnknownTask},
		{"child before parents", func() error { return j.TaskStarted(b0, t0) }, ErrNotRunnable},
		{"finish pending", func() error { return j.TaskFinished(a0, t0) }, ErrTaskState},
		{"fail pending", func() error { return j.TaskFailed(a0, t0) }, ErrTaskState},
		{"start", func() error { return j.TaskStarted(a0, t0) }, nil},
		{"start twice", func() error { return j.TaskStarted(a0, t0) }, ErrTaskState},
		{"finish before start", func() error { return j.TaskFinished(a0, t0.Add(-time.Second)) }, ErrTimeOrder},
		{"fail before start", func() error { return j.TaskFailed(a0, t0.Add(-time.Second)) }, ErrTimeOrder},
		{"fail", func() error { return j.TaskFailed(a0, t0.Add(time.Second)) }, nil},
		{"restart", func() error { return j.TaskStarted(a0, t0.Add(time.Second)) }, nil},
		{"finish", func() error { return j.TaskFinished(a0, t0.Add(2*time.Second)) }, nil},
		{"finish twice", func() error { return j.TaskFinished(a0, t0.Add(2*time.Second)) }, ErrTaskState},
		{"fail finished", func() error { return j.TaskFailed(a0, t0.Add(2*time.Second)) }, ErrTaskState},
		{"child still waits", func() error { return j.TaskStarted(b0, t0) }, ErrNotRunnable},
		{"start sibling", func() error { return j.TaskStarted(a1, t0) }, nil},
		{"finish sibling", func() error { return j.TaskFinished(a1, t0.Add(time.Second)) }, nil},
		{"child runs", func() error { return j.TaskStarted(b0, t0.Add(2*time.Second)) }, nil},
		{"finish unknown", func() error { return j.TaskFinished(TaskID{"zz", 0}, t0) }, ErrUnknownStage},
		{"fail unknown", func() error { return j.TaskFailed(TaskID{"a", 7}, t0) }, ErrUnknownTask},
		{"estimate of unknown", func() error { _, _, err := j.Estimate("zz"); return err }, ErrUnknownStage},
		{"unknown estimate", func() error { return j.UpdateEstimate("zz", cpus(1), time.Second) }, ErrUnknownStage},
		{"bad estimate", func() error { return j.UpdateEstimate("b", cpus(1), 0) }, ErrInvalidDuration},
		{"bad estimate demand", func() error { return j.UpdateEstimate("b", cpus(-1), time.Second) }, ErrInvalidDemand},
		{"bad share", func() error { return j.ShareChanged(cpus(-5)) }, ErrInvalidShare},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.want) {
			t.Fatalf("%s: got %v, want %v", st.name, err, st.want)
		}
	}
	info, err := j.Task(a0)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != Finished || info.Failures != 1 || !info.Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("a/0 = %+v, want finished after one failure, last started at 1s", info)
	}
	if _, err := j.Task(TaskID{"a", 9}); !errors.Is(err, ErrUnknownTask) {
		t.Fatalf("Task of unknown index: %v", err)
	}
}

func TestJob_ReestimatesFromFinishedTasks(t *testing.T) {
	t.Parallel()
	for _, fixed := range []bool{false, true} {
		j, err := NewJob(JobSpec{FixedEstimates: fixed, Stages: []StageSpec{
			{Name: "a", Tasks: 3, Demand: cpus(1), Duration: 10 * time.Second},
		}})
		if err != nil {
			t.Fatal(err)
		}
		for k, took := range []time.Duration{4 * time.Second, 8 * time.Second} {
			id := TaskID{"a", k}
			if err := j.TaskStarted(id, propStart); err != nil {
				t.Fatal(err)
			}
			if err := j.TaskFinished(id, propStart.Add(took)); err != nil {
				t.Fatal(err)
			}
		}
		_, got, _ := j.Estimate("a")
		want := 6 * time.Second // the mean of 4 s and 8 s
		if fixed {
			want = 10 * time.Second
		}
		if got != want {
			t.Fatalf("fixed=%v: estimate %v, want %v", fixed, got, want)
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{
		{Altruism: -0.1, MinRemaining: time.Millisecond},
		{Altruism: 1.1, MinRemaining: time.Millisecond},
		{Altruism: math.NaN(), MinRemaining: time.Millisecond},
		{Altruism: 1, MinRemaining: 0},
	} {
		if _, err := NewPlanner(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewPlanner(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestPlan_InvalidDraw(t *testing.T) {
	t.Parallel()
	p := mustPlanner(t, DefaultConfig())
	j := fig2J2(t)
	for _, draw := range []float64{-0.5, 1, 2, math.NaN(), math.Inf(1)} {
		if _, err := p.Plan(j, propStart, draw); !errors.Is(err, ErrInvalidDraw) {
			t.Errorf("draw %v: got %v, want ErrInvalidDraw", draw, err)
		}
	}
}

func TestTaskState_String(t *testing.T) {
	t.Parallel()
	for s, want := range map[TaskState]string{Pending: "pending", Running: "running", Finished: "finished",
		Failed: "failed", TaskState(9): "TaskState(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d: got %q, want %q", s, got, want)
		}
	}
	if got := (TaskID{"map", 3}).String(); got != "map/3" {
		t.Errorf("TaskID: got %q", got)
	}
}

// TestJob_TaskLost: a finished map whose output is lost runs again, and
// the reducers not started yet wait for it; the reducer already running
// goes on; the plans stay valid throughout.
func TestJob_TaskLost(t *testing.T) {
	t.Parallel()
	t0 := propStart
	j, err := NewJob(JobSpec{Stages: []StageSpec{stageSpec("map"), stageSpec("reduce", "map")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.ShareChanged(cpus(400)); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlanner(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	m0, m1, r0, r1 := TaskID{"map", 0}, TaskID{"map", 1}, TaskID{"reduce", 0}, TaskID{"reduce", 1}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := j.TaskLost(m0); !errors.Is(err, ErrTaskState) {
		t.Fatalf("losing a pending task's output: %v, want ErrTaskState", err)
	}
	for _, id := range []TaskID{m0, m1} {
		must(j.TaskStarted(id, t0))
		must(j.TaskFinished(id, t0.Add(time.Second)))
	}
	must(j.TaskStarted(r0, t0.Add(time.Second)))
	must(j.TaskLost(m0))
	if err := j.TaskLost(m0); !errors.Is(err, ErrTaskState) {
		t.Fatalf("losing it twice: %v, want ErrTaskState", err)
	}
	if info, _ := j.Task(m0); info.State != Pending || info.Failures != 0 || !info.Runnable {
		t.Fatalf("lost map = %+v, want pending and runnable, no failure counted", info)
	}
	if info, _ := j.Task(r1); info.Runnable {
		t.Fatal("an unstarted reducer is runnable while a map runs again")
	}
	if err := j.TaskStarted(r1, t0.Add(time.Second)); !errors.Is(err, ErrNotRunnable) {
		t.Fatalf("starting a reducer before the map ran again: %v, want ErrNotRunnable", err)
	}
	if j.Done() {
		t.Fatal("done with a map to run again")
	}
	d, err := p.Plan(j, t0.Add(2*time.Second), 0)
	must(err)
	if !slices.Contains(d.MustStart, m0) || slices.Contains(d.MustStart, r1) || slices.Contains(d.Optional, r1) {
		t.Fatalf("plan must-start %v optional %v: want map/0 to start and reduce/1 to wait", d.MustStart, d.Optional)
	}
	// The running reducer had fetched its input: it may finish.
	must(j.TaskFinished(r0, t0.Add(3*time.Second)))
	must(j.TaskStarted(m0, t0.Add(3*time.Second)))
	must(j.TaskFinished(m0, t0.Add(4*time.Second)))
	if info, _ := j.Task(r1); !info.Runnable {
		t.Fatal("reducer not runnable once the map finished again")
	}
	must(j.TaskStarted(r1, t0.Add(4*time.Second)))
	// No unfinished task reads map output any more.
	if err := j.TaskLost(m1); err != nil {
		t.Fatalf("losing map/1 while reduce/1 runs: %v", err)
	}
	must(j.TaskStarted(m1, t0.Add(5*time.Second)))
	must(j.TaskFinished(m1, t0.Add(6*time.Second)))
	must(j.TaskFinished(r1, t0.Add(6*time.Second)))
	if err := j.TaskLost(m1); !errors.Is(err, ErrTaskState) {
		t.Fatalf("losing output nobody reads: %v, want ErrTaskState", err)
	}
	if err := j.TaskLost(r1); !errors.Is(err, ErrTaskState) {
		t.Fatalf("losing the last stage's output: %v, want ErrTaskState", err)
	}
	if !j.Done() {
		t.Fatal("not done")
	}
}
