package sim

import (
	"math"
	"slices"
	"time"
)

// jainWindow is the window of Jain's fairness index (docs/carbyne.md).
const jainWindow = 60 * time.Second

// jainTracker integrates each job's dominant share over fixed windows.
type jainTracker struct {
	capacity []int64
	share    []float64       // per job: current dominant share
	since    []time.Duration // per job: when share last changed
	integral [][]float64     // per job, per window: ∫ share dt in seconds
}

func newJainTracker(capacity []int64, jobs int) *jainTracker {
	return &jainTracker{capacity: capacity, share: make([]float64, jobs),
		since: make([]time.Duration, jobs), integral: make([][]float64, jobs)}
}

// advance adds j's share from its last change up to now.
func (t *jainTracker) advance(j *simJob, now time.Duration) {
	i := j.idx
	from := t.since[i]
	t.since[i] = now
	if t.share[i] == 0 || now <= from {
		return
	}
	for from < now {
		w := int(from / jainWindow)
		end := min(now, time.Duration(w+1)*jainWindow)
		for len(t.integral[i]) <= w {
			t.integral[i] = append(t.integral[i], 0)
		}
		t.integral[i][w] += t.share[i] * (end - from).Seconds()
		from = end
	}
}

// set records j's share from its current usage, from now on.
func (t *jainTracker) set(j *simJob, now time.Duration) {
	t.share[j.idx], t.since[j.idx] = dominantShare(j.used, t.capacity), now
}

// dominantShare is the largest fraction of capacity that use takes.
func dominantShare(use, capacity []int64) float64 {
	s := 0.0
	for d, x := range use {
		if capacity[d] > 0 {
			s = max(s, float64(x)/float64(capacity[d]))
		}
	}
	return s
}

// dominant is the largest fraction of the cluster that need takes.
func (e *engine) dominant(need []int64) float64 { return dominantShare(need, e.capacity) }

// index returns the mean over windows up to end of Jain's index of the
// jobs active in each window, x_i being job i's share averaged over the
// part of the window it was active in. Windows in which no active job
// holds anything are left out.
func (t *jainTracker) index(jobs []*simJob, end time.Duration) float64 {
	windows := int((end + jainWindow - 1) / jainWindow)
	sum, n := 0.0, 0
	for w := range windows {
		lo, hi := time.Duration(w)*jainWindow, time.Duration(w+1)*jainWindow
		var sx, sxx float64
		k := 0
		for _, j := range jobs {
			a, b := max(lo, j.spec.arrival), min(hi, j.finish)
			if b <= a {
				continue
			}
			x := 0.0
			if w < len(t.integral[j.idx]) {
				x = t.integral[j.idx][w] / (b - a).Seconds()
			}
			sx += x
			sxx += x * x
			k++
		}
		if sxx > 0 {
			sum += sx * sx / (float64(k) * sxx)
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// result gathers the run's metrics.
func (e *engine) result() CarbyneResult {
	res := CarbyneResult{Workload: e.cfg.Workload, Scheduler: e.cfg.Scheduler, Seed: e.cfg.Seed,
		Jobs: map[string]CarbyneJob{}, Leftover: roundAll(e.leftover), Rounds: e.rounds, Plans: e.plans}
	if res.Leftover == nil {
		res.Leftover = []float64{}
	}
	jcts := make([]float64, 0, len(e.jobs))
	var makespan time.Duration
	for _, j := range e.jobs {
		jct := (j.finish - j.spec.arrival).Seconds()
		cj := CarbyneJob{Arrival: j.spec.arrival.Seconds(), JCT: jct, Greedy: j.spec.greedy}
		if j.planned > 0 {
			cj.PlannedJCT = j.planned.Seconds()
			res.Planned++
			if late := j.finish - j.spec.arrival - j.planned; late > 0 {
				res.Late++
				res.MaxLate = max(res.MaxLate, late.Seconds()/j.planned.Seconds())
			}
		}
		res.Jobs[j.name] = cj
		res.Order = append(res.Order, j.name)
		jcts = append(jcts, jct)
		makespan = max(makespan, j.finish)
	}
	res.AvgJCT = mean(jcts)
	res.P95JCT = percentile(jcts, 0.95)
	res.Makespan = makespan.Seconds()
	res.Jain = e.fair.index(e.jobs, makespan)
	if total := e.fairWork + e.leftoverWork; total > 0 {
		res.LeftoverWork = e.leftoverWork / total
	}
	return res
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// percentile returns the nearest-rank p-quantile of xs (0 for none).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(math.Ceil(p*float64(len(s)))) - 1
	return s[clampInt(k, 0, len(s)-1)]
}

// roundAll rounds fractions to 1e-9, so that 0.5 − 0.29 prints as 0.21.
func roundAll(xs []float64) []float64 {
	if xs == nil {
		return nil
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x*1e9) / 1e9
	}
	return out
}
