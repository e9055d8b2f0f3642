package master

import "time"

// A round is triggered by every event that may change what can be offered
// (a launch, a decline, a task's end, a revive), and at 10,000 agents a
// round costs a few milliseconds under the leader's lock, which every
// accept also takes: triggered as they came, rounds took 40 % of the
// leader's CPU, about 80 a second. So, as Mesos coalesces the allocations
// its events ask for, a round runs at once only when the last one ended
// long enough ago: roundGapFactor times its duration, and at least
// minRoundGap; otherwise it runs when that gap has passed, one round for
// every trigger in between. The interval's own rounds wait out the same
// gap: on a machine so loaded that a round takes most of an interval, they
// would otherwise hold the lock most of the time and every accept would
// wait behind one. Rounds then take at most about a tenth of the leader's
// time, however many events come, until a round gets so slow that the gap
// reaches its bound (ten allocation intervals, a second by default).

const (
	roundGapFactor = 10
	minRoundGap    = 2 * time.Millisecond
)

// roundGap is how long after a round that took took, ending at ended, the
// next round may start; it returns the wait from now (zero: start now).
func roundGap(ended time.Time, took time.Duration, now time.Time) time.Duration {
	gap := max(minRoundGap, roundGapFactor*took)
	return max(0, ended.Add(gap).Sub(now))
}

// roundPacer decides when the rounds asked for (by the allocation
// interval or by a trigger) run. It is the leader loop's, not safe for
// concurrent use.
type roundPacer struct {
	// maxGap bounds the gap (zero: unbounded): however slow the rounds,
	// one runs at least that long after the last, so that offers and
	// filters still expire and freed resources are still offered.
	maxGap    time.Duration
	lastEnded time.Time
	lastTook  time.Duration
	deferred  bool // a round waits out the gap, and serves every ask until it runs
}

// ask is a round asked for at now. It says whether to run one now; if
// not, wait is how long until the deferred round is due, or zero when one
// is already deferred (it will see whatever this ask was for).
func (p *roundPacer) ask(now time.Time) (run bool, wait time.Duration) {
	if p.deferred {
		return false, 0
	}
	w := roundGap(p.lastEnded, p.lastTook, now)
	if p.maxGap > 0 {
		w = min(w, max(0, p.lastEnded.Add(p.maxGap).Sub(now)))
	}
	if w > 0 {
		p.deferred = true
		return false, w
	}
	return true, 0
}

// ran records a round that ran from start to end.
func (p *roundPacer) ran(start, end time.Time) {
	p.lastEnded, p.lastTook, p.deferred = end, end.Sub(start), false
}
