package dag

import "time"

// Clock is the scheduler's time source: the plan time of every job and
// the plan timer. Tests replace it to drive time by hand.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f on its own goroutine once d has passed, unless
	// the returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started yet, and reports
	// whether it did.
	Stop() bool
}

// wallClock is the default Clock: package time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
