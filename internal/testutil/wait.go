// Package testutil holds small helpers for tests: polling with a deadline
// instead of sleeping, and free loopback ports.
package testutil

import (
	"fmt"
	"net"
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

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
