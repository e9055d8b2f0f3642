package dag

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// longJob is a job of one stage of n hour-long tasks of milli CPUs each.
func longJob(id string, n int, milli int64) Job {
	return Job{
		ID: id,
		Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
			{Name: "work", Tasks: n, Demand: cpus(milli), Duration: time.Hour},
		}, FixedEstimates: true},
		Task: func(TaskRef) protocol.TaskInfo {
			return protocol.TaskInfo{Command: protocol.CommandInfo{Value: "work"}, NonPreemptible: true}
		},
	}
}

// launchOne offers milli CPUs of kind on agent (revocable when leftover,
// as the master marks them) and returns the one task launched on it.
func (h *harness) launchOne(t *testing.T, id string, agent protocol.AgentID, kind protocol.OfferKind, milli int64) protocol.TaskInfo {
	t.Helper()
	before := len(h.d.launched())
	h.s.offers(h.d, []protocol.Offer{{ID: protocol.OfferID(id), AgentID: agent, Resources: cpus(milli),
		Kind: kind, Revocable: kind == protocol.OfferLeftover}})
	got := h.d.launched()[before:]
	if len(got) != 1 {
		t.Fatalf("offer %s launched %v, want one task", id, got)
	}
	return got[0]
}

// warn delivers the master's warning that it will kill tasks for reason.
func (h *harness) warn(reason string, withdrawn bool, tasks ...protocol.TaskInfo) {
	ev := protocol.PreemptionEvent{Deadline: h.clk.Now().Add(time.Minute).UnixNano(), Withdrawn: withdrawn}
	for _, t := range tasks {
		ev.Tasks = append(ev.Tasks, protocol.PreemptedTask{TaskID: t.TaskID, AgentID: t.AgentID,
			Resources: t.Resources, Reason: reason})
	}
	h.s.preempting(h.d, ev)
}

// kills returns the tasks the scheduler killed, in order.
func (h *harness) kills() []protocol.TaskID {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	return slices.Clone(h.d.killed)
}

func (h *harness) result(t *testing.T, job string) (Result, bool) {
	t.Helper()
	res, ended, err := h.s.Result(job)
	if err != nil {
		t.Fatal(err)
	}
	return res, ended
}

// TestScheduler_PreemptReleasesLeastProgress: warned that the master will
// revoke its oldest revocable task, the scheduler kills its newest
// revocable task on that agent instead (not a fair task, not one on
// another agent); the released task and, later, a task the master revokes
// after all run again without counting as failures (one attempt allowed),
// while a real failure still fails the job.
func TestScheduler_PreemptReleasesLeastProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t, WithMaxAttempts(1))
	h.submit(t, longJob("j", 5, 1000))
	oldest := h.launchOne(t, "o1", "agent-1", protocol.OfferLeftover, 1000)
	h.clk.Advance(10 * time.Minute)
	middle := h.launchOne(t, "o2", "agent-1", protocol.OfferLeftover, 1000)
	h.clk.Advance(5 * time.Minute)
	newest := h.launchOne(t, "o3", "agent-1", protocol.OfferLeftover, 1000)
	h.clk.Advance(time.Minute)
	fair := h.launchOne(t, "o4", "agent-1", protocol.OfferFair, 1000)
	elsewhere := h.launchOne(t, "o5", "agent-2", protocol.OfferLeftover, 1000)
	if !fair.NonPreemptible || newest.NonPreemptible {
		t.Fatalf("non-preemptible: fair task %v, leftover task %v; want true, false", fair.NonPreemptible, newest.NonPreemptible)
	}
	h.clk.Advance(4 * time.Minute)

	h.warn(protocol.ReasonRevoked, false, oldest)
	if got := h.kills(); !slices.Equal(got, []protocol.TaskID{newest.TaskID}) {
		t.Fatalf("killed %v, want only the newest revocable task on agent-1, %s", got, newest.TaskID)
	}
	// The same warning again (a leader re-planning) releases nothing more
	// while the first release is under way.
	h.warn(protocol.ReasonRevoked, false, oldest)
	if got := h.kills(); len(got) != 1 {
		t.Fatalf("killed %v after a repeated warning, want no second release", got)
	}

	h.s.status(h.d, protocol.TaskStatus{TaskID: newest.TaskID, State: protocol.TaskKilled, Reason: protocol.ReasonKilledByFramework})
	h.warn(protocol.ReasonRevoked, true, oldest)
	if res, ended := h.result(t, "j"); ended || res.Failures != 0 || res.Released != 1 {
		t.Fatalf("after the release: ended %v, result %+v; want running, no failure, one released", ended, res)
	}
	again := h.launchOne(t, "o6", "agent-1", protocol.OfferLeftover, 1000)
	if again.TaskID != newest.TaskID[:len(newest.TaskID)-1]+"2" {
		t.Fatalf("relaunched %s, want the second attempt of %s", again.TaskID, newest.TaskID)
	}

	h.s.status(h.d, protocol.TaskStatus{TaskID: middle.TaskID, State: protocol.TaskKilled, Reason: protocol.ReasonRevoked})
	if res, ended := h.result(t, "j"); ended || res.Failures != 0 || res.Preempted != 1 {
		t.Fatalf("after a revocation: ended %v, result %+v; want running, no failure, one preempted", ended, res)
	}

	h.s.status(h.d, protocol.TaskStatus{TaskID: elsewhere.TaskID, State: protocol.TaskFailed, Reason: protocol.ReasonCommandFailed})
	res, ended := h.result(t, "j")
	if !ended || !errors.Is(res.Err, ErrJobFailed) || res.Failures != 1 {
		t.Fatalf("after a real failure: ended %v, result %+v; want the job failed with one failure", ended, res)
	}
}

// TestScheduler_PreemptKeeps lists warnings the scheduler answers by
// releasing nothing, next to the one where a larger, newer task covers a
// warned one.
func TestScheduler_PreemptKeeps(t *testing.T) {
	t.Parallel()
	// Each case launches tasks and warns some of them; want are the
	// indices of the launched tasks released.
	type setup func(t *testing.T, h *harness) []protocol.TaskInfo
	twoRevocable := func(t *testing.T, h *harness) []protocol.TaskInfo {
		h.submit(t, longJob("j", 2, 1000))
		a := h.launchOne(t, "o1", "agent-1", protocol.OfferLeftover, 1000)
		h.clk.Advance(10 * time.Minute)
		return []protocol.TaskInfo{a, h.launchOne(t, "o2", "agent-1", protocol.OfferLeftover, 1000)}
	}
	cases := []struct {
		name   string
		setup  setup
		reason string
		warn   []int
		want   []int
	}{
		{name: "newer task covers", setup: twoRevocable, warn: []int{0}, want: []int{1}},
		{name: "warned task is the newest", setup: twoRevocable, warn: []int{1}},
		{name: "preempted, not revoked", setup: twoRevocable, reason: protocol.ReasonPreempted, warn: []int{0}},
		{name: "drained", setup: twoRevocable, reason: protocol.ReasonAgentDrained, warn: []int{0}},
		{name: "both warned", setup: twoRevocable, warn: []int{0, 1}},
		{name: "newer task is fair", warn: []int{0}, setup: func(t *testing.T, h *harness) []protocol.TaskInfo {
			h.submit(t, longJob("j", 2, 1000))
			a := h.launchOne(t, "o1", "agent-1", protocol.OfferLeftover, 1000)
			h.clk.Advance(10 * time.Minute)
			return []protocol.TaskInfo{a, h.launchOne(t, "o2", "agent-1", protocol.OfferFair, 1000)}
		}},
		{name: "newer task on another agent", warn: []int{0}, setup: func(t *testing.T, h *harness) []protocol.TaskInfo {
			h.submit(t, longJob("j", 2, 1000))
			a := h.launchOne(t, "o1", "agent-1", protocol.OfferLeftover, 1000)
			h.clk.Advance(10 * time.Minute)
			return []protocol.TaskInfo{a, h.launchOne(t, "o2", "agent-2", protocol.OfferLeftover, 1000)}
		}},
		{name: "newer task is smaller", warn: []int{0}, setup: func(t *testing.T, h *harness) []protocol.TaskInfo {
			h.submit(t, longJob("big", 1, 2000))
			a := h.launchOne(t, "o1", "agent-1", protocol.OfferLeftover, 2000)
			h.clk.Advance(10 * time.Minute)
			h.submit(t, longJob("small", 1, 1000))
			return []protocol.TaskInfo{a, h.launchOne(t, "o2", "agent-1", protocol.OfferLeftover, 1000)}
		}},
		{name: "newer task is larger", warn: []int{0}, want: []int{1}, setup: func(t *testing.T, h *harness) []protocol.TaskInfo {
			h.submit(t, longJob("small", 1, 1000))
			a := h.launchOne(t, "o1", "agent-1", protocol.OfferLeftover, 1000)
			h.clk.Advance(10 * time.Minute)
			h.submit(t, longJob("big", 1, 2000))
			return []protocol.TaskInfo{a, h.launchOne(t, "o2", "agent-1", protocol.OfferLeftover, 2000)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			tasks := tc.setup(t, h)
			h.clk.Advance(time.Minute)
			var warned []protocol.TaskInfo
			for _, i := range tc.warn {
				warned = append(warned, tasks[i])
			}
			reason := tc.reason
			if reason == "" {
				reason = protocol.ReasonRevoked
			}
			h.warn(reason, false, warned...)
			var want []protocol.TaskID
			for _, i := range tc.want {
				want = append(want, tasks[i].TaskID)
			}
			if got := h.kills(); !slices.Equal(got, want) {
				t.Fatalf("killed %v, want %v", got, want)
			}
		})
	}
}

// TestScheduler_TakenBackIsNoFailure: with one attempt allowed, a task the
// master kills for preemption, revocation or a drain runs again; a task
// an operator kills, or that fails, fails its job.
func TestScheduler_TakenBackIsNoFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		state  protocol.TaskState
		reason string
		failed bool
	}{
		{name: "preempted", state: protocol.TaskKilled, reason: protocol.ReasonPreempted},
		{name: "revoked", state: protocol.TaskKilled, reason: protocol.ReasonRevoked},
		{name: "drained", state: protocol.TaskKilled, reason: protocol.ReasonAgentDrained},
		{name: "operator", state: protocol.TaskKilled, reason: protocol.ReasonKilledByOperator, failed: true},
		{name: "failed", state: protocol.TaskFailed, reason: protocol.ReasonCommandFailed, failed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, WithMaxAttempts(1))
			h.submit(t, longJob("j", 1, 1000))
			first := h.launchOne(t, "o1", "agent-1", protocol.OfferFair, 1000)
			h.clk.Advance(time.Minute)
			h.s.status(h.d, protocol.TaskStatus{TaskID: first.TaskID, State: tc.state, Reason: tc.reason})
			res, ended := h.result(t, "j")
			if tc.failed {
				if !ended || !errors.Is(res.Err, ErrJobFailed) || res.Failures != 1 {
					t.Fatalf("ended %v, result %+v; want the job failed", ended, res)
				}
				return
			}
			if ended || res.Failures != 0 || res.Preempted != 1 {
				t.Fatalf("ended %v, result %+v; want running, no failure, one preempted", ended, res)
			}
			if again := h.launchOne(t, "o2", "agent-1", protocol.OfferFair, 1000); again.TaskID != "j.work.0.2" {
				t.Fatalf("relaunched %s, want j.work.0.2", again.TaskID)
			}
		})
	}
}
