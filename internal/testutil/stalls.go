package testutil

import (
	"sync"
	"testing"
	"time"
)

// StallMeter measures how long this process was kept from running: a
// goroutine sleeps a short period over and over and adds up how much later
// than asked it woke. A test that bounds how soon an in-process cluster
// acts (a lost agent replaced within the agent timeout and one allocation
// interval) allows that much more: the cluster's timers and goroutines
// waited as long, on a machine whose cores other work holds. On an idle
// machine the meter reads about nothing, and the bound is the bound.
type StallMeter struct {
	mu     sync.Mutex
	stalls []stall
	stop   chan struct{}
	done   chan struct{}
}

type stall struct {
	at   time.Time // when the late wake came
	late time.Duration
}

const (
	stallPeriod = 2 * time.Millisecond
	// stallSlack is what a wake may be late by on an idle machine (timer
	// granularity, the scheduler's own latency) without counting.
	stallSlack = time.Millisecond
)

// MeterStalls starts a StallMeter that runs until the test ends.
func MeterStalls(t testing.TB) *StallMeter {
	m := &StallMeter{stop: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	t.Cleanup(func() {
		close(m.stop)
		<-m.done
	})
	return m
}

func (m *StallMeter) run() {
	defer close(m.done)
	timer := time.NewTimer(stallPeriod)
	defer timer.Stop()
	asked := time.Now()
	for {
		select {
		case <-m.stop:
			return
		case <-timer.C:
			now := time.Now()
			if late := now.Sub(asked) - stallPeriod - stallSlack; late > 0 {
				m.mu.Lock()
				m.stalls = append(m.stalls, stall{at: now, late: late})
				m.mu.Unlock()
			}
			asked = now
			timer.Reset(stallPeriod)
		}
	}
}

// Since is how long, in all, the process was kept from running since
// start: the sum of the meter's late wakes that came after it.
func (m *StallMeter) Since(start time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total time.Duration
	for _, s := range m.stalls {
		if s.at.After(start) {
			total += s.late
		}
	}
	return total
}
