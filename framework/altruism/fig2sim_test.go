package altruism

import (
	"slices"
	"testing"
	"time"
)

// fig2Mode selects how the two-job Figure 2 cluster is run.
type fig2Mode struct {
	// altruism is P(altruism) of the jobs' planner: 1 for Carbyne, 0 for
	// the greedy baselines.
	altruism float64
	// leftover redistributes what the plans leave free: SRTF across jobs,
	// then packing by alignment. Without it each job is held to its share
	// (the strict partition of Fig. 2b).
	leftover bool
	// noShares gives both jobs a zero share, so every task is placed by the
	// packing pass: a cross-job packer (Tetris with f = 0).
	noShares bool
	// aloneShare overrides the share of a job running alone; 0 means the
	// RemainingDAG cap, its unfinished demand.
	aloneShare int64
}

// fig2Round records one scheduling instant.
type fig2Round struct {
	at                 time.Time
	plans              map[int]Decision
	pool               int64 // free capacity after must-start tasks
	srtfOrder          []int
	poolAfterSRTFFirst int64
	poolAfter          int64
	leftoverStarts     map[int][]TaskID
	used               map[int]int64
}

type fig2Result struct {
	jct    [2]time.Duration
	rounds []fig2Round
}

// runFig2 runs the Figure 2 cluster in mode until both jobs finish. Estimates
// are exact, so every task finishes exactly its duration after it starts.
func runFig2(t *testing.T, mode fig2Mode, d int64) fig2Result {
	t.Helper()
	p := mustPlanner(t, Config{Altruism: mode.altruism, MinRemaining: DefaultMinRemaining})
	jobs := []*Job{fig2J1(t, d), fig2J2(t)}
	done := [2]bool{}
	var res fig2Result
	now := fig2Start
	for step := 0; !done[0] || !done[1]; step++ {
		if step > 20 {
			t.Fatal("figure 2 cluster did not finish")
		}
		for k, j := range jobs {
			for _, ti := range j.Tasks() {
				if ti.State == Running && !ti.Start.Add(stageDur(t, j, ti.ID.Stage)).After(now) {
					if err := j.TaskFinished(ti.ID, now); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !done[k] && j.Done() {
				done[k] = true
				res.jct[k] = now.Sub(fig2Start)
			}
		}
		var active []int
		for k := range jobs {
			if !done[k] {
				active = append(active, k)
			}
		}
		if len(active) == 0 {
			break
		}
		round := fig2Round{at: now, plans: map[int]Decision{}, leftoverStarts: map[int][]TaskID{}, used: map[int]int64{}}
		for _, k := range active {
			share := int64(fig2Capacity / 2)
			switch {
			case mode.noShares:
				share = 0
			case len(active) == 1 && mode.aloneShare > 0:
				share = mode.aloneShare
			case len(active) == 1:
				share = unfinishedCPUs(t, jobs[k])
			}
			if err := jobs[k].ShareChanged(cpus(share)); err != nil {
				t.Fatal(err)
			}
			dec := mustPlan(t, p, jobs[k], now, 0)
			round.plans[k] = dec
			for _, id := range dec.MustStart {
				start(t, jobs[k], id, now)
			}
		}
		round.pool = fig2Capacity - runningCPUs(t, jobs)
		round.poolAfterSRTFFirst = round.pool
		if mode.leftover {
			fig2Leftover(t, p, jobs, active, &round, mode.noShares)
		}
		round.poolAfter = fig2Capacity - runningCPUs(t, jobs)
		for k, j := range jobs {
			round.used[k] = runningCPUs(t, []*Job{j})
		}
		res.rounds = append(res.rounds, round)

		next := time.Time{}
		for _, j := range jobs {
			for _, ti := range j.Tasks() {
				if ti.State == Running {
					end := ti.Start.Add(stageDur(t, j, ti.ID.Stage))
					if next.IsZero() || end.Before(next) {
						next = end
					}
				}
			}
		}
		if next.IsZero() {
			t.Fatalf("at %v nothing runs and the jobs are not done", now.Sub(fig2Start))
		}
		now = next
	}
	return res
}

// fig2Leftover hands the free capacity to optional tasks: jobs in ascending
// order of remaining work (SRTF), each taking its best-aligned tasks while
// they fit; then one packing pass across all jobs. With noShares only the
// packing pass runs.
func fig2Leftover(t *testing.T, p *Planner, jobs []*Job, active []int, r *fig2Round, noShares bool) {
	t.Helper()
	pool := r.pool
	if !noShares {
		r.srtfOrder = slices.Clone(active)
		slices.SortStableFunc(r.srtfOrder, func(a, b int) int {
			wa := p.NormalizedWork(jobs[a], r.at, cpus(fig2Capacity))
			wb := p.NormalizedWork(jobs[b], r.at, cpus(fig2Capacity))
			switch {
			case wa < wb:
				return -1
			case wa > wb:
				return 1
			}
			return 0
		})
		for n, k := range r.srtfOrder {
			for {
				k2, id, need := bestAligned(t, jobs, []int{k}, r, pool)
				if k2 < 0 {
					break
				}
				start(t, jobs[k], id, r.at)
				r.leftoverStarts[k] = append(r.leftoverStarts[k], id)
				pool -= need
			}
			if n == 0 {
				r.poolAfterSRTFFirst = pool
			}
		}
	}
	for {
		k, id, need := bestAligned(t, jobs, active, r, pool)
		if k < 0 {
			return
		}
		start(t, jobs[k], id, r.at)
		r.leftoverStarts[k] = append(r.leftoverStarts[k], id)
		pool -= need
	}
}

// bestAligned returns the optional, still unstarted task of the given jobs
// that fits in pool with the best alignment (demand × free), ties going to
// the earlier job and the earlier task in priority order.
func bestAligned(t *testing.T, jobs []*Job, among []int, r *fig2Round, pool int64) (int, TaskID, int64) {
	t.Helper()
	bestJob, bestID, bestNeed, bestScore := -1, TaskID{}, int64(0), int64(-1)
	for _, k := range among {
		for _, id := range r.plans[k].Optional {
			ti, err := jobs[k].Task(id)
			if err != nil {
				t.Fatal(err)
			}
			if ti.State != Pending && ti.State != Failed {
				continue
			}
			need := stageCPUs(t, jobs[k], id.Stage)
			if need > pool {
				continue
			}
			if score := need * pool; score > bestScore {
				bestJob, bestID, bestNeed, bestScore = k, id, need, score
			}
		}
	}
	return bestJob, bestID, bestNeed
}

func start(t *testing.T, j *Job, id TaskID, at time.Time) {
	t.Helper()
	if err := j.TaskStarted(id, at); err != nil {
		t.Fatal(err)
	}
}

func stageDur(t *testing.T, j *Job, stage string) time.Duration {
	t.Helper()
	_, d, err := j.Estimate(stage)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func stageCPUs(t *testing.T, j *Job, stage string) int64 {
	t.Helper()
	r, _, err := j.Estimate(stage)
	if err != nil {
		t.Fatal(err)
	}
	return r.Scalar("cpus")
}

func runningCPUs(t *testing.T, jobs []*Job) int64 {
	t.Helper()
	var n int64
	for _, j := range jobs {
		for _, ti := range j.Tasks() {
			if ti.State == Running {
				n += stageCPUs(t, j, ti.ID.Stage)
			}
		}
	}
	return n
}

// unfinishedCPUs is the RemainingDAG demand cap: the summed demand of every
// unfinished task.
func unfinishedCPUs(t *testing.T, j *Job) int64 {
	t.Helper()
	var n int64
	for _, ti := range j.Tasks() {
		if ti.State != Finished {
			n += stageCPUs(t, j, ti.ID.Stage)
		}
	}
	return n
}
