package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/allot-project/allot/executor/files"
)

// shuffleFlow is one transfer being served: each chunk waits for the
// receiver's ingress (shuffle_ingress.go), then for the agent's egress
// (shuffle_pacer.go). It asks the receiver for the next chunk as soon as
// this one is granted, so that the ask is waiting at the receiver when its
// port is free rather than a NATS round trip later. asked says the
// receiver was asked, and is to be told when the transfer ends.
type shuffleFlow struct {
	s       *shuffleServer
	t       files.Transfer
	seq     uint64
	release func()
	once    sync.Once
	asked   atomic.Bool

	// ahead answers the ask for the next chunk, under way (nil: none);
	// stopAhead calls it off.
	ahead     chan ingressAnswer
	stopAhead context.CancelFunc
}

type ingressAnswer struct {
	asked bool
	err   error
}

func (f *shuffleFlow) Pace(ctx context.Context, n, next int) error {
	start := time.Now()
	asked, err := f.ingress(ctx, n)
	if asked {
		f.asked.Store(true)
		if err == nil && next > 0 {
			f.askAhead(ctx, next)
		}
	}
	if err == nil && f.s.pacer != nil {
		err = f.s.pacer.wait(ctx, f.t, f.seq, n)
	}
	if asked || f.s.pacer != nil {
		f.s.counters.waitedNs.Add(int64(time.Since(start)))
	}
	if err == nil && f.s.pacer != nil {
		f.s.counters.paced.Add(int64(n))
	}
	return err
}

// ingress waits for the receiver's grant of the next n bytes: the answer
// to the ask made ahead, or a new ask.
func (f *shuffleFlow) ingress(ctx context.Context, n int) (bool, error) {
	if f.ahead == nil {
		return f.s.asker.wait(ctx, f.t, f.seq, n)
	}
	ahead := f.ahead
	f.ahead = nil
	defer f.stopAhead()
	select {
	case a := <-ahead:
		return a.asked, a.err
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// askAhead asks the receiver for the next n bytes while this chunk goes
// out.
func (f *shuffleFlow) askAhead(ctx context.Context, n int) {
	actx, cancel := context.WithCancel(ctx)
	ahead := make(chan ingressAnswer, 1)
	f.ahead, f.stopAhead = ahead, cancel
	go func() {
		asked, err := f.s.asker.wait(actx, f.t, f.seq, n)
		ahead <- ingressAnswer{asked: asked, err: err}
	}()
}

// Sent adds the bytes to the flow's progress, reported while it runs (a
// download naming no coflow is paced only).
func (f *shuffleFlow) Sent(n int64) {
	if f.t.Coflow == "" {
		return
	}
	f.s.counters.sent.Add(n)
	f.s.report.progress(f.t, n)
}

func (f *shuffleFlow) Done(_ int64, ok bool) {
	f.once.Do(func() {
		// Recorded before the slot is freed, so that progress is
		// reported in the order the transfers ended.
		if f.t.Coflow != "" {
			f.s.report.ended(f.t, ok)
		}
		if f.s.pacer != nil {
			f.s.pacer.close(f.seq)
		}
		if f.ahead != nil {
			// A transfer cut short asked for more: the ask is called off
			// and waited for, so that the receiver hears the end after
			// it (on the same connection) and drops it with the transfer.
			f.stopAhead()
			<-f.ahead
			f.ahead = nil
		}
		if f.asked.Load() {
			f.s.asker.done(f.t, f.seq)
		}
		f.release()
	})
}
