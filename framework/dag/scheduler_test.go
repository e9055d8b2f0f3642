package dag

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// TestScheduler_Lifecycle runs altruism's map-reduce example through the
// scheduler: greedy until the share arrives, then one map must start and
// two are optional; a stale fair offer launches the must-start map and
// gives the rest back; a leftover offer runs an optional map early; a fair
// offer with nothing to start is declined as leftover; the last map
// becomes must-start once the share has room for it; and the job ends
// with its counts.
func TestScheduler_Lifecycle(t *testing.T) {
	t.Parallel()
	var done []Result
	h := newHarness(t, WithOnDone(func(r Result) { done = append(done, r) }))
	if h.d.suppresses != 1 {
		t.Fatalf("suppresses %d with no jobs, want 1", h.d.suppresses)
	}
	start := h.clk.Now()
	h.submit(t, mapReduce("mr"))
	if h.d.revives != 1 {
		t.Fatalf("revives %d after the first job, want 1", h.d.revives)
	}
	if d, m, o := counts(h.d.lastDemand(t)); d != 3 || m != 3 || o != 0 {
		t.Fatalf("greedy demand %d must %d optional %d, want 3 3 0", d, m, o)
	}

	h.share(2000)
	if d, m, o := counts(h.d.lastDemand(t)); d != 3 || m != 1 || o != 2 {
		t.Fatalf("altruistic demand %d must %d optional %d, want 3 1 2", d, m, o)
	}
	if got, want := h.clk.pending(), start.Add(time.Minute); !got.Equal(want) {
		t.Fatalf("plan timer at %v, want %v", got, want)
	}

	// Sized for the greedy demand: only the must-start map launches.
	h.offer("o1", protocol.OfferFair, cpus(3000))
	tasks := h.d.launched()
	if len(tasks) != 1 || tasks[0].TaskID != "mr.map.0.1" || !tasks[0].Resources.Equal(cpus(1000)) ||
		tasks[0].AgentID != "agent-1" || tasks[0].Command.Value != "run map on agent-1" {
		t.Fatalf("launched %+v, want mr.map.0.1 on cpus:1000", tasks)
	}
	if st := h.s.Stats(); !st.DeclinedLeftover.Equal(cpus(2000)) || st.FairTasks != 1 {
		t.Fatalf("stats %+v, want 2000 cpus given back and one fair task", st)
	}

	h.offer("o2", protocol.OfferLeftover, cpus(1000))
	tasks = h.d.launched()
	if len(tasks) != 2 || tasks[1].TaskID != "mr.map.1.1" {
		t.Fatalf("launched %v, want mr.map.1.1 on the leftover offer", tasks)
	}

	// map.2 may wait: a fair offer now has nothing to start.
	h.offer("o3", protocol.OfferFair, cpus(1000))
	if len(h.d.launched()) != 2 || len(h.d.declined) != 1 || h.d.declined[0][0] != "o3" {
		t.Fatalf("launched %v declined %v, want o3 declined", h.d.launched(), h.d.declined)
	}
	if st := h.s.Stats(); !st.DeclinedLeftover.Equal(cpus(3000)) || st.DeclinedOffers != 1 || st.LeftoverTasks != 1 {
		t.Fatalf("stats %+v", st)
	}

	// A minute on, the maps end and map.2 reaches its latest start.
	h.clk.Advance(time.Minute)
	if _, m, o := counts(h.d.lastDemand(t)); m != 0 || o != 1 {
		t.Fatalf("must %d optional %d while the share is busy, want 0 1", m, o)
	}
	h.end("mr.map.0.1", protocol.TaskFinished)
	h.end("mr.map.1.1", protocol.TaskFinished)
	if _, m, o := counts(h.d.lastDemand(t)); m != 1 || o != 0 {
		t.Fatalf("must %d optional %d after the maps, want 1 0", m, o)
	}
	h.offer("o4", protocol.OfferFair, cpus(1000))
	h.clk.Advance(time.Minute)
	h.end("mr.map.2.1", protocol.TaskFinished)
	h.offer("o5", protocol.OfferFair, cpus(1000))
	h.clk.Advance(time.Minute)
	h.end("mr.reduce.0.1", protocol.TaskFinished)

	res, err := h.s.Wait(context.Background(), "mr")
	if err != nil {
		t.Fatal(err)
	}
	if res.JCT != 3*time.Minute || res.FairTasks != 3 || res.LeftoverTasks != 1 || res.Failures != 0 {
		t.Fatalf("result %+v, want JCT 3m, 3 fair and 1 leftover task", res)
	}
	if len(done) != 1 || done[0].Job != "mr" {
		t.Fatalf("on done %v", done)
	}
	if !h.d.suppressed {
		t.Fatal("offers not suppressed once the job ended")
	}
	if d, m, o := counts(h.d.lastDemand(t)); d+m+o != 0 {
		t.Fatalf("demand after the job ended %+v, want none", h.d.lastDemand(t))
	}
}

// TestScheduler_Retry shows a failed task running again with a new
// attempt ID, lost and dropped attempts running again without counting,
// and a job failing once a task has failed (or erred) MaxAttempts times;
// its running tasks are killed.
func TestScheduler_Retry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, WithMaxAttempts(2))
	h.submit(t, mapReduce("mr"))
	h.offer("o1", protocol.OfferFair, cpus(3000))
	if n := len(h.d.launched()); n != 3 {
		t.Fatalf("launched %d greedily, want 3", n)
	}
	h.end("mr.map.1.1", protocol.TaskFailed)
	h.offer("o2", protocol.OfferFair, cpus(1000))
	tasks := h.d.launched()
	if got := tasks[len(tasks)-1].TaskID; got != "mr.map.1.2" {
		t.Fatalf("retry launched %s, want mr.map.1.2", got)
	}
	// Lost and dropped attempts run again without counting.
	h.end("mr.map.1.2", protocol.TaskLost)
	h.offer("o3", protocol.OfferFair, cpus(1000))
	h.end("mr.map.1.3", protocol.TaskDropped)
	if r, ended, _ := h.s.Result("mr"); r.Failures != 1 || ended {
		t.Fatalf("after a lost and a dropped attempt: result %+v ended %v, want one failure", r, ended)
	}
	h.offer("o4", protocol.OfferFair, cpus(1000))
	tasks = h.d.launched()
	if got := tasks[len(tasks)-1].TaskID; got != "mr.map.1.4" {
		t.Fatalf("retry launched %s, want mr.map.1.4", got)
	}
	h.end("mr.map.1.4", protocol.TaskError)
	res, err := h.s.Wait(context.Background(), "mr")
	if !errors.Is(err, ErrJobFailed) || res.Failures != 2 {
		t.Fatalf("result %+v, error %v, want ErrJobFailed after 2 failures", res, err)
	}
	if len(h.d.killed) != 2 {
		t.Fatalf("killed %v, want the two running maps", h.d.killed)
	}
	// Late statuses of the killed tasks change nothing.
	h.end("mr.map.0.1", protocol.TaskKilled)
	if r, ended, _ := h.s.Result("mr"); !ended || r.Failures != 2 {
		t.Fatalf("result %+v after a late status", r)
	}
}

// TestScheduler_LaunchRefused: a launch refused for stale offers leaves
// the tasks pending; one refused for the tasks' own fault counts as a
// failed attempt.
func TestScheduler_LaunchRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, WithMaxAttempts(2))
	h.submit(t, Job{ID: "one", Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
		{Name: "s", Tasks: 1, Demand: cpus(100), Duration: time.Second},
	}}, Task: mapReduce("").Task})

	h.d.launchErr = protocol.Errorf(protocol.ErrUnknownOffer, "gone")
	h.offer("o1", protocol.OfferFair, cpus(100))
	if r, _, _ := h.s.Result("one"); r.Failures != 0 {
		t.Fatalf("failures %d after a stale offer, want 0", r.Failures)
	}
	h.d.launchErr = protocol.Errorf(protocol.ErrInvalidArgument, "bad command")
	h.offer("o2", protocol.OfferFair, cpus(100))
	if r, ended, _ := h.s.Result("one"); r.Failures != 1 || ended {
		t.Fatalf("result %+v ended %v, want one failure", r, ended)
	}
	h.d.launchErr = fmtAmbiguous()
	h.offer("o3", protocol.OfferFair, cpus(100))
	// The unanswered launch counts as started: its task's end settles it.
	// The master refusing it for its offers is no failed attempt either,
	// however often it happens.
	if r, _, _ := h.s.Result("one"); r.FairTasks != 1 {
		t.Fatalf("fair tasks %d after an unanswered launch, want 1", r.FairTasks)
	}
	for i, id := range []protocol.TaskID{"one.s.0.3", "one.s.0.4"} {
		st := []protocol.TaskState{protocol.TaskDropped, protocol.TaskLost}[i]
		h.s.status(h.d, protocol.TaskStatus{TaskID: id, State: st, Reason: protocol.ReasonInvalidOffers})
		if r, ended, _ := h.s.Result("one"); r.Failures != 1 || ended {
			t.Fatalf("after refusal %d for stale offers: result %+v ended %v, want still one failure", i+1, r, ended)
		}
		h.offer(fmt.Sprintf("o%d", 4+i), protocol.OfferFair, cpus(100))
	}
	h.end("one.s.0.5", protocol.TaskFinished)
	if _, err := h.s.Wait(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
}

func fmtAmbiguous() error { return errors.Join(framework.ErrAmbiguous, context.DeadlineExceeded) }

// TestScheduler_Greedy: WithGreedy ignores the share and declares every
// runnable task as must-start.
func TestScheduler_Greedy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, WithGreedy())
	h.submit(t, mapReduce("mr"))
	h.share(2000)
	if d, m, o := counts(h.d.lastDemand(t)); d != 3 || m != 3 || o != 0 {
		t.Fatalf("demand %d must %d optional %d, want 3 3 0", d, m, o)
	}
	if !h.clk.pending().IsZero() {
		t.Fatal("greedy plans armed the plan timer")
	}
}

// TestScheduler_EmptyShare: an empty share makes the share unknown again,
// and jobs greedy.
func TestScheduler_EmptyShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.submit(t, mapReduce("mr"))
	h.share(2000)
	h.s.shareUpdate(h.d, protocol.ShareUpdateEvent{})
	if _, m, o := counts(h.d.lastDemand(t)); m != 3 || o != 0 {
		t.Fatalf("must %d optional %d, want 3 0", m, o)
	}
	if st := h.s.Stats(); st.ShareUpdates != 2 || !st.Share.IsEmpty() {
		t.Fatalf("stats %+v", st)
	}
}

// TestScheduler_TinyShare: a job whose share cannot hold one task still
// starts its most urgent one.
func TestScheduler_TinyShare(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.submit(t, mapReduce("mr"))
	h.share(500)
	if _, m, o := counts(h.d.lastDemand(t)); m != 1 || o != 2 {
		t.Fatalf("must %d optional %d, want 1 2", m, o)
	}
}

// TestScheduler_TwoJobs: the framework's share is split between jobs, and
// one report carries both plans.
func TestScheduler_TwoJobs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.submit(t, mapReduce("a"))
	h.submit(t, mapReduce("b"))
	h.share(4000)
	if d, m, o := counts(h.d.lastDemand(t)); d != 6 || m != 2 || o != 4 {
		t.Fatalf("demand %d must %d optional %d, want 6 2 4", d, m, o)
	}
	h.s.mu.Lock()
	a, b := h.s.jobs["a"].share, h.s.jobs["b"].share
	h.s.mu.Unlock()
	if !a.Equal(cpus(2000)) || !b.Equal(cpus(2000)) {
		t.Fatalf("shares %v and %v, want 2000 each", a, b)
	}
	// A fair offer serves the must-start task of each.
	h.offer("o1", protocol.OfferFair, cpus(2000))
	tasks := h.d.launched()
	if len(tasks) != 2 || tasks[0].TaskID != "a.map.0.1" || tasks[1].TaskID != "b.map.0.1" {
		t.Fatalf("launched %v", tasks)
	}
}

func TestScheduler_Errors(t *testing.T) {
	t.Parallel()
	if _, err := New(WithAltruism(2)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("WithAltruism(2): got %v, want ErrInvalidOption", err)
	}
	if _, err := New(WithMaxAttempts(0)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("WithMaxAttempts(0): got %v, want ErrInvalidOption", err)
	}
	h := newHarness(t)
	ctx := context.Background()
	bad := []struct {
		name string
		job  Job
		want error
	}{
		{"no id", Job{Spec: mapReduce("").Spec, Task: mapReduce("").Task}, ErrInvalidJob},
		{"dot in id", Job{ID: "a.b", Spec: mapReduce("").Spec, Task: mapReduce("").Task}, ErrInvalidJob},
		{"no task builder", Job{ID: "x", Spec: mapReduce("").Spec}, ErrInvalidJob},
		{"no stages", Job{ID: "x", Task: mapReduce("").Task}, altruism.ErrNoStages},
		{"bad stage name", Job{ID: "x", Task: mapReduce("").Task, Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
			{Name: "a b", Tasks: 1, Demand: cpus(1), Duration: time.Second}}}}, ErrInvalidJob},
	}
	for _, tc := range bad {
		if err := h.s.Submit(ctx, tc.job); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	h.submit(t, mapReduce("mr"))
	if err := h.s.Submit(ctx, mapReduce("mr")); !errors.Is(err, ErrDuplicateJob) {
		t.Errorf("duplicate: got %v, want ErrDuplicateJob", err)
	}
	if _, err := h.s.Wait(ctx, "nope"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("wait unknown: got %v, want ErrUnknownJob", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.s.Wait(wctx, "mr"); !errors.Is(err, context.Canceled) {
		t.Errorf("wait canceled: got %v, want context.Canceled", err)
	}
	h.s.Close()
	if _, err := h.s.Wait(ctx, "mr"); !errors.Is(err, ErrClosed) {
		t.Errorf("wait after close: got %v, want ErrClosed", err)
	}
	if err := h.s.Submit(ctx, mapReduce("later")); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after close: got %v, want ErrClosed", err)
	}
}

// TestScheduler_SubmitBeforeRegistered: jobs submitted before the driver
// registers are declared at registration, and offers are not suppressed.
func TestScheduler_SubmitBeforeRegistered(t *testing.T) {
	t.Parallel()
	s, err := New(WithClock(newFakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Submit(context.Background(), mapReduce("mr")); err != nil {
		t.Fatal(err)
	}
	d := &fakeDriver{}
	s.registered(d)
	if d.suppresses != 0 || len(d.demands) != 1 {
		t.Fatalf("suppresses %d, demands %v; want 0 and one", d.suppresses, d.demands)
	}
}

// TestScheduler_TimerBacksOffWhileTasksOverrun: once running tasks outlive
// their estimates, every plan is due again at once (they are planned to end
// within the planner's MinRemaining); the plan timer then backs off,
// doubling up to maxTimerBackoff, instead of planning every minTimer, and
// a task's end plans at once again.
func TestScheduler_TimerBacksOffWhileTasksOverrun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.submit(t, mapReduce("mr"))
	h.share(2000)
	h.offer("o1", protocol.OfferFair, cpus(1000))
	h.offer("o2", protocol.OfferLeftover, cpus(1000))
	if n := len(h.d.launched()); n != 2 {
		t.Fatalf("launched %d maps, want 2", n)
	}
	// The maps' minute is up, but they run on.
	h.clk.Advance(time.Minute)
	var delays []time.Duration
	for range 10 {
		next := h.clk.pending()
		if next.IsZero() {
			t.Fatal("no plan timer while map.2 waits for the busy share")
		}
		delays = append(delays, next.Sub(h.clk.Now()))
		h.clk.Advance(next.Sub(h.clk.Now()))
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] || delays[i] > maxTimerBackoff {
			t.Fatalf("timer delays %v: want non-decreasing, at most %v", delays, maxTimerBackoff)
		}
	}
	if delays[len(delays)-1] < 16*minTimer {
		t.Fatalf("timer delays %v: the timer did not back off", delays)
	}
	plans := h.s.Stats().Plans
	h.end("mr.map.0.1", protocol.TaskFinished)
	if h.s.Stats().Plans == plans {
		t.Fatal("a task's end did not plan again")
	}
	if _, m, _ := counts(h.d.lastDemand(t)); m != 1 {
		t.Fatalf("must-start %d after a map ended, want map.2", m)
	}
}
