package carbyne

import (
	"time"

	"github.com/allot-project/allot/sim/internal/stats"
)

// jainWindow is the window of Jain's fairness index (docs/carbyne.md).
const jainWindow = 60 * time.Second

// jainTracker integrates each job's dominant share of the cluster, and
// its entitlement (the dominant share of its share A_k), over fixed
// windows, for two fairness indices: Jain's over the raw shares, and the
// shortfall index (docs/carbyne.md).
type jainTracker struct {
	capacity []int64
	usage    *windowIntegral
	entitled *windowIntegral
}

func newJainTracker(capacity []int64, jobs int) *jainTracker {
	return &jainTracker{capacity: capacity, usage: newWindowIntegral(jobs), entitled: newWindowIntegral(jobs)}
}

// advance adds j's share from its last change up to now.
func (t *jainTracker) advance(j *simJob, now time.Duration) { t.usage.advance(j.idx, now) }

// set records j's share from its current usage, from now on.
func (t *jainTracker) set(j *simJob, now time.Duration) {
	t.usage.set(j.idx, dominantShare(j.used, t.capacity), now)
}

// entitle records j's entitlement from now on: the dominant share of its
// share A_k (share, by resource in the cluster's order).
func (t *jainTracker) entitle(j *simJob, share []int64, now time.Duration) {
	t.entitled.advance(j.idx, now)
	t.entitled.set(j.idx, dominantShare(share, t.capacity), now)
}

// windowIntegral integrates a piecewise-constant value per job over fixed
// windows of jainWindow.
type windowIntegral struct {
	value    []float64
	since    []time.Duration // when value last changed
	integral [][]float64     // per window: ∫ value dt in seconds
}

func newWindowIntegral(jobs int) *windowIntegral {
	return &windowIntegral{value: make([]float64, jobs), since: make([]time.Duration, jobs), integral: make([][]float64, jobs)}
}

// advance adds job i's value from its last change up to now.
func (t *windowIntegral) advance(i int, now time.Duration) {
	from := t.since[i]
	t.since[i] = now
	if t.value[i] == 0 || now <= from {
		return
	}
	for from < now {
		w := int(from / jainWindow)
		end := min(now, time.Duration(w+1)*jainWindow)
		for len(t.integral[i]) <= w {
			t.integral[i] = append(t.integral[i], 0)
		}
		t.integral[i][w] += t.value[i] * (end - from).Seconds()
		from = end
	}
}

// set makes v job i's value from now on (advance first).
func (t *windowIntegral) set(i int, v float64, now time.Duration) { t.value[i], t.since[i] = v, now }

// mean is job j's value averaged over the part of window w it was active
// in; false when it was not active in w.
func (t *windowIntegral) mean(j *simJob, w int) (float64, bool) {
	lo, hi := time.Duration(w)*jainWindow, time.Duration(w+1)*jainWindow
	a, b := max(lo, j.spec.arrival), min(hi, j.finish)
	if b <= a {
		return 0, false
	}
	if w >= len(t.integral[j.idx]) {
		return 0, true
	}
	return t.integral[j.idx][w] / (b - a).Seconds(), true
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
	return meanOverWindows(end, func(w int, xs []float64) []float64 {
		for _, j := range jobs {
			if x, ok := t.usage.mean(j, w); ok {
				xs = append(xs, x)
			}
		}
		return xs
	})
}

// shortfallIndex returns the mean over windows up to end of Jain's index
// of x_i = min(1, usage_i / entitlement_i) over the jobs active in each
// window: usage is job i's dominant share and entitlement the dominant
// share of its share A_k, each averaged over the part of the window it was
// active in. A job with no entitlement in a window was owed nothing: x_i
// is 1. So the index is 1 when every active job got at least its share,
// however the rest of the cluster was spread, and falls as jobs fall short
// of theirs unequally. Windows in which no active job was entitled to
// anything are left out.
func (t *jainTracker) shortfallIndex(jobs []*simJob, end time.Duration) float64 {
	return meanOverWindows(end, func(w int, xs []float64) []float64 {
		owed := false
		start := len(xs)
		for _, j := range jobs {
			e, ok := t.entitled.mean(j, w)
			if !ok {
				continue
			}
			u, _ := t.usage.mean(j, w)
			x := 1.0
			if e > 0 {
				owed = true
				x = min(1, u/e)
			}
			xs = append(xs, x)
		}
		if !owed {
			return xs[:start]
		}
		return xs
	})
}

// meanOverWindows is the mean over the windows up to end of Jain's index
// of the values window appends for each; windows without values, or whose
// values are all zero, are left out (1 when every window is).
func meanOverWindows(end time.Duration, window func(w int, xs []float64) []float64) float64 {
	windows := int((end + jainWindow - 1) / jainWindow)
	sum, n := 0.0, 0
	var xs []float64
	for w := range windows {
		xs = window(w, xs[:0])
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
