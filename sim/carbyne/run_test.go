package carbyne

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

const eps = 1e-9

func fig2Config(scheduler string) Config {
	cfg := DefaultConfig()
	cfg.Workload, cfg.Scheduler = WorkloadFig2, scheduler
	return cfg
}

func mustRun(t *testing.T, cfg Config) Result {
	t.Helper()
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func near(a, b float64) bool { return math.Abs(a-b) <= eps }

// Figure 2 (docs/carbyne.md, A1): the strict partition gives 2.05 on average,
// Carbyne 1.55 (J2 done at 1.0 on leftover, J1 at its T_1 = 2.1), and the
// leftover pool goes 0.50 → 0.21 → 0: SRTF starts J2's second task, then
// packing one more S1 task of J1. Work-conserving DRF and cross-job
// packing also reach 1.55 (footnote 2).
func TestRunCarbyne_Figure2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scheduler string
		j1, j2    float64
		leftover  []float64
	}{
		{SchedDRF, 2.1, 2.0, []float64{0.21}},
		{SchedCarbyne, 2.1, 1.0, []float64{0.5, 0.21, 0}},
		{SchedDRFWC, 1.1, 2.0, []float64{0}},
		{SchedTetris, 2.1, 1.0, []float64{1, 0.42, 0}},
		{SchedSJF, 2.1, 1.0, []float64{1, 0.42, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.scheduler, func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, fig2Config(tc.scheduler))
			if got := res.Jobs["J1"].JCT; !near(got, tc.j1) {
				t.Errorf("J1: got %v, want %v", got, tc.j1)
			}
			if got := res.Jobs["J2"].JCT; !near(got, tc.j2) {
				t.Errorf("J2: got %v, want %v", got, tc.j2)
			}
			if want := (tc.j1 + tc.j2) / 2; !near(res.AvgJCT, want) {
				t.Errorf("average: got %v, want %v", res.AvgJCT, want)
			}
			if !near(res.Makespan, max(tc.j1, tc.j2)) {
				t.Errorf("makespan: got %v, want %v", res.Makespan, max(tc.j1, tc.j2))
			}
			if !reflect.DeepEqual(res.Leftover, tc.leftover) {
				t.Errorf("leftover pool: got %v, want %v", res.Leftover, tc.leftover)
			}
		})
	}
}

// Carbyne's first plans at t=0: T_1 = 2.1 and T_2 = 2.0 in shares of 0.5.
// TestRunCarbyne_Figure2LeftoverWork checks the share of work run on
// leftover offers. Work is dominant share times run time: J1 has 2 S0
// tasks of 0.04 for 1 s, 3 S1 of 0.21 for 1 s and one S2 of 0.2 for 0.1 s
// (0.73), J2 two tasks of 0.29 for 1 s (0.58), 1.31 in all. Under carbyne
// the leftover offers at t = 0 start J2's second task (0.29) and J1's two
// S0 tasks (0.08): 0.37 of 1.31. Strict DRF makes no leftover offers.
func TestRunCarbyne_Figure2LeftoverWork(t *testing.T) {
	t.Parallel()
	if got, want := mustRun(t, fig2Config(SchedCarbyne)).LeftoverWork, 0.37/1.31; math.Abs(got-want) > eps {
		t.Errorf("carbyne: %v of the work on leftover offers, want %v", got, want)
	}
	if got := mustRun(t, fig2Config(SchedDRF)).LeftoverWork; got != 0 {
		t.Errorf("drf: %v of the work on leftover offers, want 0", got)
	}
}

func TestRunCarbyne_Figure2Plans(t *testing.T) {
	t.Parallel()
	res := mustRun(t, fig2Config(SchedCarbyne))
	for job, want := range map[string]float64{"J1": 2.1, "J2": 2.0} {
		if got := res.Jobs[job].PlannedJCT; !near(got, want) {
			t.Errorf("T_k of %s: got %v, want %v", job, got, want)
		}
	}
	if res.Planned != 2 || res.Late != 0 {
		t.Errorf("planned %d, late %d; want 2, 0", res.Planned, res.Late)
	}
}

// With P(altruism) = 0 or every job greedy, each job asks for all its
// runnable tasks in the fair phase, as a plain framework does (work-
// conserving DRF). Its shapes come in priority order (J1's S1 before S0),
// so the fair phase alternates J1's S1 tasks with J2's: J1 0.42 and J2
// 0.58 fill the cluster, J2 ends at 1.0 and J1 at 2.1, and nothing is
// ever left over.
func TestRunCarbyne_Figure2Greedy(t *testing.T) {
	t.Parallel()
	noAltruism := fig2Config(SchedCarbyne)
	noAltruism.Altruism = 0
	allGreedy := fig2Config(SchedCarbyne)
	allGreedy.Greedy = 1
	for name, cfg := range map[string]Config{"altruism 0": noAltruism, "greedy 1": allGreedy} {
		res := mustRun(t, cfg)
		if j1, j2 := res.Jobs["J1"].JCT, res.Jobs["J2"].JCT; !near(j1, 2.1) || !near(j2, 1.0) {
			t.Errorf("%s: J1 %v, J2 %v; want 2.1, 1", name, j1, j2)
		}
		for _, l := range res.Leftover {
			if l != 0 {
				t.Errorf("%s: leftover %v, want none", name, res.Leftover)
				break
			}
		}
	}
}

// Misestimation reaches the planner only: with +50% J2's two tasks (435
// each, 1.5 s) no longer fit its share together, so T_2 = 3.0; the tasks
// still run for their true second.
func TestRunCarbyne_MisestimateReachesPlannerOnly(t *testing.T) {
	t.Parallel()
	cfg := fig2Config(SchedCarbyne)
	cfg.Misestimate = 50
	res := mustRun(t, cfg)
	if got := res.Jobs["J2"].PlannedJCT; !near(got, 3.0) {
		t.Errorf("T_2 with +50%%: got %v, want 3", got)
	}
	if got := res.Jobs["J2"].JCT; got > 2+eps || got < 1-eps {
		t.Errorf("J2 ran %v s, want between 1 and 2 (true durations)", got)
	}
}

func TestCarbyneConfig_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*Config)
	}{
		{"workload", func(c *Config) { c.Workload = "tpch" }},
		{"scheduler", func(c *Config) { c.Scheduler = "fifo" }},
		{"jobs", func(c *Config) { c.Jobs = 0 }},
		{"machines", func(c *Config) { c.Machines = -1 }},
		{"load", func(c *Config) { c.Load = 0 }},
		{"altruism", func(c *Config) { c.Altruism = 1.5 }},
		{"misestimate", func(c *Config) { c.Misestimate = -95 }},
		{"greedy", func(c *Config) { c.Greedy = -0.1 }},
		{"share interval", func(c *Config) { c.ShareInterval = -time.Second }},
		{"mean arrival", func(c *Config) { c.MeanArrival = -time.Second }},
		{"share cap", func(c *Config) { c.ShareCap = "runnable-now" }},
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tc := range tests {
		cfg := DefaultConfig()
		tc.mod(&cfg)
		if _, err := Run(cfg); !errors.Is(err, ErrBadSimulation) {
			t.Errorf("%s: got %v, want ErrBadSimulation", tc.name, err)
		}
	}
}

func TestCarbyneConfig_LoadHalvesMachines(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Jobs, cfg.Load = 3, 2
	if got := cfg.buildWorkload().machines; got != 50 {
		t.Errorf("load 2 of 100 machines: got %d, want 50", got)
	}
	cfg.Load = 1000
	if got := cfg.buildWorkload().machines; got != 1 {
		t.Errorf("load 1000: got %d machines, want 1", got)
	}
}

// A job's share is capped by its whole remaining DAG by default and by
// its running and runnable tasks with ShareCapRunnable: a stage that waits
// on a parent counts toward the first cap only.
func TestSimJob_RemainingByShareCap(t *testing.T) {
	t.Parallel()
	cpus := func(n int64) protocol.Resources { return protocol.Scalars(map[string]int64{protocol.ResCPUs: n}) }
	stages := []altruism.StageSpec{
		{Name: "map", Tasks: 4, Demand: cpus(1000), Duration: time.Second},
		{Name: "reduce", Tasks: 2, Demand: cpus(3000), Duration: time.Second, Parents: []string{"map"}},
	}
	j, err := newSimJob(0, jobSpec{name: "J", stages: stages, estimates: stages}, []string{protocol.ResCPUs}, 1)
	if err != nil {
		t.Fatal(err)
	}
	dims := []string{protocol.ResCPUs}
	if got := j.remaining(dims, false).Scalars[protocol.ResCPUs]; got != 10000 {
		t.Errorf("remaining DAG: %d milli-CPU, want 10000 (4x1000 + 2x3000)", got)
	}
	if got := j.remaining(dims, true).Scalars[protocol.ResCPUs]; got != 4000 {
		t.Errorf("runnable: %d milli-CPU, want 4000 (the maps only)", got)
	}
	j.stage[0].unstarted, j.stage[0].running = 0, 1
	if got := j.remaining(dims, true).Scalars[protocol.ResCPUs]; got != 1000 {
		t.Errorf("one map running, reduce waiting: %d milli-CPU, want 1000", got)
	}
}
