package integration

import (
	"context"
	"fmt"
	"math/bits"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// The scenario of docs/preemption.md: on a three-master cluster of three 4-CPU
// agents, eng/batch holds everything with 12 long-running 1-CPU tasks;
// then eng/prod (weight 3, guarantee 2 CPUs) asks for 1-CPU tasks.

// preemptionRun is one run of the scenario.
type preemptionRun struct {
	c           *testcluster.Cluster
	batch, prod *testcluster.TestFramework
	// before is where batch's tasks ran when prod arrived.
	before []testcluster.AgentTask
	cfg    master.PreemptionConfig
	alloc  time.Duration
	// stalls is how long this process (the cluster's too) was kept from
	// running: the bounds below allow it.
	stalls *testutil.StallMeter
}

func startPreemption(t *testing.T, policy string, deadline time.Duration) *preemptionRun {
	t.Helper()
	// The shipped interval, cap and allocation interval; a short delay and
	// deadline keep the test short.
	pc := master.DefaultPreemptionConfig()
	pc.Policy, pc.Delay, pc.Deadline = policy, 500*time.Millisecond, deadline
	alloc := master.DefaultConfig().AllocationInterval
	c := testcluster.New(t, testcluster.Options{
		Masters:            3,
		AllocationInterval: alloc,
		Configure:          func(_ int, cfg *master.Config) { cfg.Preemption = pc },
	})
	for range 3 {
		c.NewAgent(testcluster.AgentOptions{Resources: agentResources(4), Held: true})
	}
	batch := c.NewFramework(testcluster.FrameworkOptions{Name: "batch", Role: "eng/batch",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: 12}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Max: 12}})
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		if got := runningCPUs(c.Agents())[batch.ID()]; got != 12000 {
			return fmt.Errorf("batch runs %d milli-CPUs, want the whole 12000", got)
		}
		return nil
	})
	cl, err := api.NewClient(c.HTTPAddrs())
	if err != nil {
		t.Fatal(err)
	}
	w := 3.0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.SetRole(ctx, "eng/prod", api.RoleRequest{Weight: &w, Guarantee: map[string]int64{protocol.ResCPUs: 2000}}); err != nil {
		t.Fatal(err)
	}
	r := &preemptionRun{c: c, batch: batch, cfg: pc, alloc: alloc, stalls: testutil.MeterStalls(t)}
	for _, a := range c.Agents() {
		r.before = append(r.before, a.Tasks()...)
	}
	r.prod = c.NewFramework(testcluster.FrameworkOptions{Name: "prod", Role: "eng/prod",
		Demand:     []protocol.TaskShape{{Resources: unitTask(), Count: 12}},
		AutoLaunch: &testcluster.AutoLaunch{Resources: unitTask(), Max: 12}})
	return r
}

// reach waits until prod runs cpus milli-CPUs and returns when it first
// saw that, with the first warning batch received from the leader it last
// subscribed with. Warnings are soft state (docs/preemption.md): a leader
// elected meanwhile (the test cluster's short Raft timeouts on a loaded
// machine) plans afresh and warns with deadlines of its own.
func (r *preemptionRun) reach(t *testing.T, cpus int64, within time.Duration) (time.Time, protocol.PreemptionEvent) {
	t.Helper()
	var reached time.Time
	testutil.WaitFor(t, within, 2*time.Millisecond, func() error {
		if got := runningCPUs(r.c.Agents())[r.prod.ID()]; got < cpus {
			return fmt.Errorf("prod runs %d milli-CPUs, want %d", got, cpus)
		}
		reached = time.Now()
		return nil
	})
	evs := r.batch.Preemptions()
	if len(evs) == 0 || evs[0].Withdrawn {
		t.Fatalf("prod reached %d milli-CPUs but batch saw no warning first: %+v", cpus, evs)
	}
	since := r.batch.SubscribedAt()
	for _, ev := range evs {
		if warnedAt := time.Unix(0, ev.Deadline).Add(-r.cfg.Deadline); !ev.Withdrawn && !warnedAt.Before(since) {
			if ev.Deadline != evs[0].Deadline {
				t.Logf("batch re-subscribed (a new leader) after the first warning; measuring from the new leader's first")
			}
			return reached, ev
		}
	}
	return reached, evs[0]
}

// killed checks that batch's preempted tasks were all warned first and
// ended KILLED with reason preempted, and returns how many there were.
func (r *preemptionRun) killed(t *testing.T) int {
	t.Helper()
	// Batch hears of its killed tasks on its own stream: wait until it
	// knows of every task its agents no longer run.
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		gone := 12 - int(runningCPUs(r.c.Agents())[r.batch.ID()]/1000)
		ended := 0
		for _, ft := range r.batch.Tasks() {
			if last, ok := ft.Last(); ok && last.State.Terminal() {
				ended++
			}
		}
		if ended < gone {
			return fmt.Errorf("batch saw %d of its tasks end, its agents run %d fewer", ended, gone)
		}
		return nil
	})
	warned := map[protocol.TaskID]bool{}
	for _, ev := range r.batch.Preemptions() {
		for _, pt := range ev.Tasks {
			if !ev.Withdrawn {
				warned[pt.TaskID] = true
			}
		}
	}
	n := 0
	for _, ft := range r.batch.Tasks() {
		last, ok := ft.Last()
		if !ok || !last.State.Terminal() {
			continue
		}
		if last.State != protocol.TaskKilled || last.Reason != protocol.ReasonPreempted {
			t.Fatalf("batch task %s ended %s (%s), want KILLED, preempted", ft.Info.TaskID, last.State, last.Reason)
		}
		if !warned[ft.Info.TaskID] {
			t.Fatalf("batch task %s was preempted without a warning", ft.Info.TaskID)
		}
		n++
	}
	return n
}

// fewestToFree is the brute-force minimum number of batch tasks whose
// removal lets `units` prod tasks of unitTask fit on the agents, given
// where batch's tasks ran.
func fewestToFree(t *testing.T, tasks []testcluster.AgentTask, agents int, agentCPUs, units int64) int {
	t.Helper()
	if len(tasks) > 20 {
		t.Fatalf("%d tasks: too many for brute force", len(tasks))
	}
	index := map[protocol.AgentID]int{}
	for _, tk := range tasks {
		if _, ok := index[tk.Info.AgentID]; !ok {
			index[tk.Info.AgentID] = len(index)
		}
	}
	best := len(tasks) + 1
	for set := uint32(0); set < 1<<len(tasks); set++ {
		k := bits.OnesCount32(set)
		if k >= best {
			continue
		}
		free := make([]int64, agents)
		for i := range free {
			free[i] = agentCPUs
		}
		for i, tk := range tasks {
			if set&(1<<i) == 0 {
				free[index[tk.Info.AgentID]] -= tk.Info.Resources.Scalar(protocol.ResCPUs)
			}
		}
		var fit int64
		for _, f := range free {
			fit += f / unitTask().Scalar(protocol.ResCPUs)
		}
		if fit >= units {
			best = k
		}
	}
	return best
}

func TestPreemption_guaranteeWithinDeadline(t *testing.T) {
	t.Parallel()
	r := startPreemption(t, "guarantees", 2*time.Second)
	reached, first := r.reach(t, 2000, 20*time.Second)
	deadline := time.Unix(0, first.Deadline)
	stalled := r.stalls.Since(deadline.Add(-r.cfg.Deadline))
	if limit := deadline.Add(r.alloc + stalled); reached.After(limit) {
		t.Errorf("prod reached its guarantee %v after the first warning's deadline, want within one allocation interval (%v) and the %v the process was stalled",
			reached.Sub(deadline), r.alloc, stalled)
	}
	n := r.killed(t)
	if want := fewestToFree(t, r.before, 3, 4000, 2); n > want+3 {
		t.Errorf("preempted %d tasks, the minimum is %d (plus at most one per agent)", n, want)
	} else {
		t.Logf("preempted %d tasks (brute-force minimum %d); guarantee reached %v after the deadline (process stalled %v)", n, want, reached.Sub(deadline), stalled)
	}
	// Nothing beyond the guarantee is preempted: batch keeps 10 CPUs.
	if got := runningCPUs(r.c.Agents())[r.batch.ID()]; got != 10000 {
		t.Errorf("batch runs %d milli-CPUs after the guarantee was met, want 10000", got)
	}
}

func TestPreemption_fairShareWithinTwiceTheDeadline(t *testing.T) {
	t.Parallel()
	r := startPreemption(t, "fair", 5*time.Second)
	// prod (weight 3) and batch (weight 1) under eng share 12 CPUs 9:3.
	reached, first := r.reach(t, 9000, 40*time.Second)
	warnedAt := time.Unix(0, first.Deadline).Add(-r.cfg.Deadline)
	stalled := r.stalls.Since(warnedAt)
	if limit := 2*(r.cfg.Deadline+r.alloc) + stalled; reached.Sub(warnedAt) > limit {
		t.Errorf("prod reached its fair share %v after the first warning, want within %v (the process stalled %v of it)", reached.Sub(warnedAt), limit, stalled)
	}
	n := r.killed(t)
	if want := fewestToFree(t, r.before, 3, 4000, 9); n > want+3 {
		t.Errorf("preempted %d tasks, the minimum is %d (plus at most one per agent)", n, want)
	}
	if got := runningCPUs(r.c.Agents())[r.batch.ID()]; got != 3000 {
		t.Errorf("batch runs %d milli-CPUs, want its fair 3000", got)
	}
}

func TestPreemption_offTakesNothing(t *testing.T) {
	t.Parallel()
	r := startPreemption(t, "off", time.Second)
	// Enough decisions for a need to pass its delay and a warning its
	// deadline, had anything been preempted.
	want := int((r.cfg.Delay+r.cfg.Deadline)/r.cfg.Interval) + 2
	testutil.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		n, err := leaderMetric(r.c, "allot_preemption_decisions_total")
		if err != nil || n < want {
			return fmt.Errorf("leader made %d preemption decisions (%v), want %d", n, err, want)
		}
		return nil
	})
	if evs := r.batch.Preemptions(); len(evs) != 0 {
		t.Fatalf("policy off warned batch: %+v", evs)
	}
	if got := runningCPUs(r.c.Agents())[r.prod.ID()]; got != 0 {
		t.Fatalf("policy off: prod runs %d milli-CPUs, want none", got)
	}
}

// leaderMetric reads a counter from the leader's /metrics.
func leaderMetric(c *testcluster.Cluster, name string) (int, error) {
	f, err := scrapeMetric(c.WaitForLeader().HTTPAddr(), name)
	return int(f), err
}
