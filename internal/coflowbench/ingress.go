package coflowbench

import (
	"context"
	"sync"
	"time"
)

// ingress is a receiving agent's port: the downloads into it share rate
// bytes a second, a read at a time, in the order they ask. The testbed's
// receivers are this process, so it caps what each emulated receiver
// takes in; the senders' agents cap what they send. A nil port, or one of
// rate 0, takes in without limit.
type ingress struct {
	rate float64
	mu   sync.Mutex
	free time.Time // when the port has taken in every read granted
}

// wait blocks until n more bytes may be read: the port carries them
// after those granted before.
func (in *ingress) wait(ctx context.Context, n int) error {
	if in == nil || in.rate <= 0 {
		return ctx.Err()
	}
	in.mu.Lock()
	now := time.Now()
	if in.free.Before(now) {
		in.free = now
	}
	in.free = in.free.Add(time.Duration(float64(n) / in.rate * float64(time.Second)))
	until := in.free
	in.mu.Unlock()
	return sleepUntil(ctx, until)
}
