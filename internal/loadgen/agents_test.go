package loadgen

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

var errDial = errors.New("dial tcp: i/o timeout")

// TestPatiently: a dial that fails twice is tried a third time after
// pauses of 0.5 and 1 s; one that always fails is given up after the
// attempts allowed, with its error; an ended context stops the pauses.
func TestPatiently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		start := time.Now()
		v, err := patiently(t.Context(), 5, func() (int, error) {
			calls++
			if calls < 3 {
				return 0, errDial
			}
			return 7, nil
		})
		if err != nil || v != 7 || calls != 3 {
			t.Fatalf("got %d, %v after %d calls; want 7 after 3", v, err, calls)
		}
		if waited := time.Since(start); waited != 1500*time.Millisecond {
			t.Errorf("waited %v between the attempts, want 1.5s", waited)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		_, err := patiently(t.Context(), 5, func() (int, error) { calls++; return 0, errDial })
		if !errors.Is(err, errDial) || calls != 5 {
			t.Fatalf("got %v after %d calls; want the dial error after 5", err, calls)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		calls := 0
		_, err := patiently(ctx, 5, func() (int, error) { calls++; cancel(); return 0, errDial })
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errDial) || calls != 1 {
			t.Fatalf("got %v after %d calls; want the dial error and the cancellation after 1", err, calls)
		}
	})
}
