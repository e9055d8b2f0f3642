// Package testutil holds small helpers for tests: polling with a deadline
// instead of sleeping, free loopback ports, a TCP proxy that cuts or
// stalls its connections, and what a benchmark's timed parts cost in CPU
// and in time taken by the hypervisor.
package testutil

import (
	"fmt"
	"testing"
	"time"
)

// WaitFor calls check every interval until it returns nil or total has
// passed, then fails the test with check's last error.
func WaitFor(t testing.TB, total, interval time.Duration, check func() error) {
	t.Helper()
	if err := Poll(total, interval, check); err != nil {
		t.Fatal(err)
	}
}

// Poll calls check every interval until it returns nil, or returns its last
// error once total has passed.
func Poll(total, interval time.Duration, check func() error) error {
	deadline := time.Now().Add(total)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met after %s: %w", total, err)
		}
		time.Sleep(interval)
	}
}
