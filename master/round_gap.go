package master

import "time"

// A round is triggered by every event that may change what can be offered
// (a launch, a decline, a task's end, a revive), and at 10,000 agents a
// round costs a few milliseconds under the leader's lock, which every
// accept also takes: triggered as they came, rounds took 40 % of the
// leader's CPU, about 80 a second. So, as Mesos coalesces the allocations
// its events ask for, a triggered round runs at once only when the last
// one ended long enough ago: roundGapFactor times its duration, and at
// least minRoundGap; otherwise it runs when that gap has passed, one round
// for every trigger in between. Rounds then take at most about a tenth of
// a core, however many events come.

const (
	roundGapFactor = 10
	minRoundGap    = 2 * time.Millisecond
)

// roundGap is how long after a round that took took, ending at ended, the
// next triggered round may start; it returns the wait from now (zero:
// start now).
func roundGap(ended time.Time, took time.Duration, now time.Time) time.Duration {
	gap := max(minRoundGap, roundGapFactor*took)
	return max(0, ended.Add(gap).Sub(now))
}
