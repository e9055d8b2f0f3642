package loadgen

import (
	"context"
	"sync"
	"time"
)

// lagProbe measures how late a process gets to run: a timer due every
// interval, and how long after its due time each one is handled. In the
// agents' process, which runs at a lower priority on a machine with no
// core to spare, that lateness is part of every command's way to an
// agent, and would not be there with agents on machines of their own.
type lagProbe struct {
	mu   sync.Mutex
	lags []time.Duration
}

// lagInterval is how often the probe's timer is due.
const lagInterval = 10 * time.Millisecond

func (p *lagProbe) run(ctx context.Context) {
	due := time.Now().Add(lagInterval)
	t := time.NewTimer(lagInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// Not the channel's time, which is when the timer fired, but
			// when this goroutine got to run.
			late := max(0, time.Since(due))
			p.mu.Lock()
			p.lags = append(p.lags, late)
			p.mu.Unlock()
			due = due.Add(lagInterval)
			if n := time.Now(); due.Before(n) {
				// Ticks missed while it could not run are one lateness,
				// not many.
				due = n.Add(lagInterval)
			}
			t.Reset(time.Until(due))
		}
	}
}

// take returns the lateness since the last take.
func (p *lagProbe) take() Quantiles {
	p.mu.Lock()
	lags := p.lags
	p.lags = nil
	p.mu.Unlock()
	return quantiles(lags)
}
