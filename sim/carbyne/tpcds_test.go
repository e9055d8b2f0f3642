package carbyne

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/sim/internal/stats"
)

// smallTPCDS is the tpcds workload cut down for tests: n jobs with an
// eighth of the tasks per stage (at least one), on m machines.
func smallTPCDS(n, m int, seed uint64, offline bool) workload {
	jobs := tpcdsWorkload(n, seed, offline, 20*time.Second)
	for i := range jobs {
		for k := range jobs[i].stages {
			jobs[i].stages[k].Tasks = max(1, jobs[i].stages[k].Tasks/8)
		}
		jobs[i].estimates = jobs[i].stages
	}
	return workload{machines: m, machine: DefaultConfig().buildWorkload().machine, jobs: jobs}
}

func mustEngine(t *testing.T, cfg Config, w workload) *engine {
	t.Helper()
	e, err := newEngine(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The generated DAGs match docs/carbyne.md's common setup (Table 1, TPC-DS row):
// stages median 8 and 95th percentile 23, 1 to 4 barriers (median 1),
// critical path median 5 stages, whole-second durations from 5 s to 4 min.
func TestTPCDSWorkload_Shape(t *testing.T) {
	t.Parallel()
	jobs := tpcdsWorkload(400, 1, false, 20*time.Second)
	var stages, barriers, depth []float64
	for _, spec := range jobs {
		j, err := newSimJob(0, spec, []string{protocol.ResCPUs, protocol.ResMem}, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, d := 0, 0
		for i, s := range spec.stages {
			if len(s.Parents) > 1 {
				b++
			}
			d = max(d, j.stage[i].depth+1)
			if s.Duration < 5*time.Second || s.Duration > 240*time.Second || s.Duration%time.Second != 0 {
				t.Fatalf("%s/%s: duration %v", spec.name, s.Name, s.Duration)
			}
			if s.Tasks < 1 || s.Demand.Scalar(protocol.ResCPUs) < 1000 || s.Demand.Scalar(protocol.ResMem) < 1024 {
				t.Fatalf("%s/%s: %d tasks of %v", spec.name, s.Name, s.Tasks, s.Demand)
			}
		}
		stages, barriers, depth = append(stages, float64(len(spec.stages))), append(barriers, float64(b)), append(depth, float64(d))
	}
	check := func(what string, got, lo, hi float64) {
		if got < lo || got > hi {
			t.Errorf("%s: got %v, want %v to %v", what, got, lo, hi)
		}
	}
	check("stages p50", stats.Percentile(stages, 0.5), 7, 9)
	check("stages p95", stats.Percentile(stages, 0.95), 20, 26)
	check("barriers p50", stats.Percentile(barriers, 0.5), 1, 1)
	check("barriers p95", stats.Percentile(barriers, 0.95), 3, 4)
	check("barriers max", slices.Max(barriers), 1, 4)
	check("critical path p50", stats.Percentile(depth, 0.5), 4, 6)
	gap := (jobs[len(jobs)-1].arrival / time.Duration(len(jobs)-1)).Seconds()
	check("mean arrival gap", gap, 17, 23)
}

func TestTPCDSWorkload_Seeded(t *testing.T) {
	t.Parallel()
	a, b := tpcdsWorkload(20, 7, false, 20*time.Second), tpcdsWorkload(20, 7, false, 20*time.Second)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("one seed gave two workloads")
	}
	if c := tpcdsWorkload(20, 8, false, 20*time.Second); reflect.DeepEqual(a, c) {
		t.Fatal("two seeds gave one workload")
	}
	off := tpcdsWorkload(20, 7, true, 20*time.Second)
	for i := range off {
		if off[i].arrival != 0 {
			t.Fatalf("offline job %s arrives at %v", off[i].name, off[i].arrival)
		}
		if !reflect.DeepEqual(off[i].stages, a[i].stages) {
			t.Fatalf("offline job %s has other stages than online", off[i].name)
		}
	}
}

// Every scheduler finishes every job, the simulator's books agree with the
// allocator's after every round, no job finishes faster than its critical
// path, and strict DRF never starts a task that takes a job past its share
// (unless it ran nothing: a job may always run one task).
func TestRunCarbyne_Invariants(t *testing.T) {
	t.Parallel()
	for _, sched := range Schedulers() {
		t.Run(sched, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.Scheduler, cfg.Altruism = sched, 0.8
			e := mustEngine(t, cfg, smallTPCDS(10, 3, 3, false))
			for {
				before := map[*simJob][]int64{}
				for _, j := range e.active {
					before[j] = slices.Clone(j.used)
				}
				more, err := e.advance()
				if err != nil {
					t.Fatal(err)
				}
				if !more {
					break
				}
				checkRound(t, e, before)
			}
			if len(e.active) > 0 || e.nextArrival < len(e.jobs) {
				t.Fatalf("%d jobs left unfinished", len(e.active)+len(e.jobs)-e.nextArrival)
			}
			res := e.result()
			for _, j := range e.jobs {
				if cp := j.pathLength(); res.Jobs[j.name].JCT < cp.Seconds()-eps {
					t.Errorf("%s finished in %v s, under its critical path %v", j.name, res.Jobs[j.name].JCT, cp)
				}
			}
			if !(res.Jain > 0 && res.Jain <= 1+eps) {
				t.Errorf("Jain's index %v outside (0, 1]", res.Jain)
			}
		})
	}
}

func checkRound(t *testing.T, e *engine, before map[*simJob][]int64) {
	t.Helper()
	total := make([]int64, len(e.dims))
	for _, j := range e.active {
		u, err := e.alloc.Usage(j.fw)
		if err != nil {
			t.Fatal(err)
		}
		for d, name := range e.dims {
			if u.Scalar(name) != j.used[d] {
				t.Fatalf("at %v %s: allocator has %v, simulator %v", e.now, j.name, u, j.used)
			}
		}
		addVec(total, j.used)
		if e.cfg.Scheduler != SchedDRF || reflect.DeepEqual(before[j], j.used) {
			continue
		}
		running := 0
		for i := range j.stage {
			running += j.stage[i].running
		}
		idle := !slices.ContainsFunc(before[j], func(x int64) bool { return x != 0 })
		for d, name := range e.dims {
			if j.used[d] > j.share.Scalar(name) && !(idle && running == 1) {
				t.Fatalf("at %v %s runs %v, over its share %v", e.now, j.name, j.used, j.share)
			}
		}
	}
	for d := range total {
		if total[d] != e.clusterUse[d] || total[d] > e.capacity[d] {
			t.Fatalf("at %v: jobs use %v, cluster books %v, capacity %v", e.now, total, e.clusterUse, e.capacity)
		}
	}
}

// pathLength is the job's critical path by true durations.
func (j *simJob) pathLength() time.Duration {
	longest := make([]time.Duration, len(j.stage))
	var best time.Duration
	for k := len(j.byBFS) - 1; k >= 0; k-- {
		s := j.byBFS[k]
		var tail time.Duration
		for _, c := range j.stage[s].children {
			tail = max(tail, longest[c])
		}
		longest[s] = j.stage[s].dur + tail
		best = max(best, longest[s])
	}
	return best
}

func TestRunCarbyne_Deterministic(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Altruism, cfg.Greedy = 0.6, 0.3
	run := func() Result {
		res, err := mustEngine(t, cfg, smallTPCDS(8, 2, 5, false)).run()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
}

// Theorem 3.1 (A2): offline, with exact estimates, no job finishes after
// the T_k of its first plan. The simulator holds it up to its heuristics:
// machines are packed whole while T_k is planned in one virtual bin, a
// job's share can shrink in one resource as the mix of everyone's
// remaining work changes, and leftover tasks are never preempted, so a
// deferred task can find its resources still lent out. The stated
// tolerance: at most 5% of the jobs with a finite first T_k finish after
// it, none by more than 10% of it. (Jobs whose share cannot hold one of
// their tasks have no finite T_k.)
func TestRunCarbyne_Theorem31(t *testing.T) {
	t.Parallel()
	planned, late, worst := 0, 0, 0.0
	total := 0
	for seed := uint64(1); seed <= 8; seed++ {
		cfg := DefaultConfig()
		cfg.Offline, cfg.Seed = true, seed
		res, err := mustEngine(t, cfg, smallTPCDS(12, 4, seed, true)).run()
		if err != nil {
			t.Fatal(err)
		}
		total += len(res.Jobs)
		planned += res.Planned
		late += res.Late
		worst = max(worst, res.MaxLate)
	}
	t.Logf("%d jobs, %d with a finite T_k, %d late, worst by %.1f%% of T_k", total, planned, late, 100*worst)
	if planned < total*3/4 {
		t.Errorf("only %d of %d jobs had a finite first T_k", planned, total)
	}
	if late*20 > planned {
		t.Errorf("%d of %d jobs finished after their first T_k, want at most 5%%", late, planned)
	}
	if worst > 0.10 {
		t.Errorf("a job finished %.1f%% of its T_k late, want at most 10%%", 100*worst)
	}
}
