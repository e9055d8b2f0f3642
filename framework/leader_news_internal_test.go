package framework

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
)

// TestRetryAttempts_newLeaderEndsTheWait: a request refused for want of a
// leader waits its back-off between attempts, but goes again the moment a
// new leader is heard of, and its back-off starts over.
func TestRetryAttempts_newLeaderEndsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		news := newLeaderNews()
		news.heard(1)
		start := time.Now()
		var tries []time.Duration
		var leaderUp atomic.Bool
		attempt := func() error {
			tries = append(tries, time.Since(start))
			if !leaderUp.Load() {
				return nats.ErrNoResponders
			}
			return nil
		}
		// The leader is gone for 700 ms; its successor announces itself then.
		go func() {
			time.Sleep(700 * time.Millisecond)
			leaderUp.Store(true)
			news.heard(2)
		}()
		err := retryAttempts(context.Background(), attempt, nil, news.next, func(err error) error { return err })
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		last := tries[len(tries)-1]
		if last != 700*time.Millisecond {
			t.Fatalf("the attempt that reached the new leader went at %s, want at its announcement, 700ms (attempts at %v)", last, tries)
		}
		if len(tries) < 4 {
			t.Fatalf("attempts at %v: want the back-off's attempts before the announcement", tries)
		}
	})
}

// TestRetryAttempts_oldTermDoesNotWake: an announcement of a term already
// heard (the periodic one) does not cut a wait short.
func TestRetryAttempts_oldTermDoesNotWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		news := newLeaderNews()
		news.heard(3)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		var tries []time.Duration
		attempt := func() error {
			tries = append(tries, time.Since(start))
			if len(tries) == 8 {
				cancel()
			}
			return nats.ErrNoResponders
		}
		go func() {
			for range 50 {
				time.Sleep(5 * time.Millisecond)
				news.heard(3)
				news.heard(2)
			}
		}()
		if err := retryAttempts(ctx, attempt, nil, news.next, func(err error) error { return err }); !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("retry: %v, want the last attempt's error", err)
		}
		// Back-off steps are drawn from [d/2, d) with d = 10, 20, 40, ... ms, at most 500.
		for i := 1; i < len(tries); i++ {
			if gap, least := tries[i]-tries[i-1], min(requestBackoff.Min<<(i-1), requestBackoff.Max)/2; gap < least {
				t.Fatalf("attempt %d came %s after the one before, under the back-off's %s (attempts at %v)", i, gap, least, tries)
			}
		}
	})
}
