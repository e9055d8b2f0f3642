package testutil

import (
	"errors"
	"testing"
	"time"
)

func TestPoll_SucceedsOnceConditionHolds(t *testing.T) {
	t.Parallel()
	n := 0
	err := Poll(time.Second, time.Millisecond, func() error {
		n++
		if n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("got err %v after %d calls, want nil after 3", err, n)
	}
}

func TestPoll_ReturnsLastErrorAtDeadline(t *testing.T) {
	t.Parallel()
	want := errors.New("never")
	err := Poll(20*time.Millisecond, time.Millisecond, func() error { return want })
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want it to wrap %v", err, want)
	}
}

func TestFreePort_IsUsable(t *testing.T) {
	t.Parallel()
	if p := FreePort(t); p <= 0 || p > 65535 {
		t.Fatalf("got port %d", p)
	}
}
