package framework

import (
	"sync"
	"time"
)

// leaderNews wakes the requests that wait to retry when a leader announces
// itself in a term not heard before. After a failover, a request refused
// for want of a leader (no responders) then goes to the new one as soon as
// it serves, instead of at its next back-off step, up to half a second
// later (requestBackoff).
type leaderNews struct {
	mu   sync.Mutex
	term uint64
	ch   chan struct{} // closed at the next new term
}

func newLeaderNews() *leaderNews { return &leaderNews{ch: make(chan struct{})} }

// heard records an announcement of term; a term later than any before
// wakes the waiters.
func (n *leaderNews) heard(term uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if term <= n.term {
		return
	}
	n.term = term
	close(n.ch)
	n.ch = make(chan struct{})
}

// next returns a channel closed when a new leader is next heard of; nil
// (never closed) for a nil leaderNews.
func (n *leaderNews) next() <-chan struct{} {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ch
}

// sleepUnlessWoken waits d, until done is closed or until wake is; it
// reports false only when done closed.
func sleepUnlessWoken(done, wake <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-wake:
		return true
	case <-t.C:
		return true
	}
}
