package framework

import (
	"math/rand/v2"
	"time"
)

// Backoff is a capped exponential back-off with jitter: attempt 0 waits
// about Min, each later attempt doubles it up to Max, and every wait is
// drawn from [d/2, d) so that clients failing together do not retry in
// lockstep. The zero value waits 10ms to 1s.
type Backoff struct {
	Min time.Duration
	Max time.Duration
}

// Default bounds of the zero Backoff.
const (
	defaultBackoffMin = 10 * time.Millisecond
	defaultBackoffMax = time.Second
)

// Delay returns the wait before retry number attempt (0 for the first).
func (b Backoff) Delay(attempt int) time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = defaultBackoffMin
	}
	if hi <= 0 {
		hi = max(defaultBackoffMax, lo)
	}
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	return Jitter(d)
}

// Jitter returns a duration drawn uniformly from [d/2, d).
func Jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half)
}

// sleep waits d or until done is closed; it reports whether d passed.
func sleep(done <-chan struct{}, d time.Duration) bool {
	return sleepUnlessWoken(done, nil, d)
}
