package carbyne

import (
	"time"

	"github.com/allot-project/allot/sim/internal/stats"
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
	var xs []float64
	for w := range windows {
		xs = t.windowShares(xs[:0], jobs, w)
		if x, ok := stats.Jain(xs); ok {
			sum += x
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// windowShares appends to xs the share of every job active in window w,
// averaged over the part of the window it was active in.
func (t *jainTracker) windowShares(xs []float64, jobs []*simJob, w int) []float64 {
	lo, hi := time.Duration(w)*jainWindow, time.Duration(w+1)*jainWindow
	for _, j := range jobs {
		a, b := max(lo, j.spec.arrival), min(hi, j.finish)
		if b <= a {
			continue
		}
		x := 0.0
		if w < len(t.integral[j.idx]) {
			x = t.integral[j.idx][w] / (b - a).Seconds()
		}
		xs = append(xs, x)
	}
	return xs
}
