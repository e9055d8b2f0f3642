package master

import (
	"testing"
	"time"
)

// TestRoundGap: a triggered round waits ten times the last round's
// duration after it ended (at least minRoundGap), so that rounds take at
// most about a tenth of the leader's time however often they are
// triggered; one triggered long enough after the last starts at once.
func TestRoundGap(t *testing.T) {
	t.Parallel()
	ended := time.Unix(1000, 0)
	for _, tc := range []struct {
		took, since, want time.Duration
	}{
		{3 * time.Millisecond, 0, 30 * time.Millisecond},
		{3 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond},
		{3 * time.Millisecond, 30 * time.Millisecond, 0},
		{3 * time.Millisecond, time.Second, 0},
		{10 * time.Microsecond, 0, minRoundGap}, // a small cluster's round
		{10 * time.Microsecond, minRoundGap, 0},
		{0, 0, minRoundGap}, // a round that took no time
	} {
		if got := roundGap(ended, tc.took, ended.Add(tc.since)); got != tc.want {
			t.Errorf("round of %v, %v after it: wait %v, want %v", tc.took, tc.since, got, tc.want)
		}
	}
	if got := roundGap(time.Time{}, 0, time.Now()); got != 0 {
		t.Errorf("no round yet: wait %v, want none", got)
	}
	// Rounds back to back at the gap take a tenth of the time.
	took := 5 * time.Millisecond
	if busy := float64(took) / float64(took+roundGap(ended, took, ended)); busy > 0.1 {
		t.Errorf("rounds of %v at the gap keep the leader busy %.0f%% of the time", took, 100*busy)
	}
}

// TestRoundPacer: after a slow round, the interval's rounds wait out the
// gap as triggered ones do (a round of 75 ms at a 100 ms interval would
// otherwise hold the lock three quarters of the time), every ask during
// the wait is served by the one deferred round, and fast rounds run at
// every ask.
func TestRoundPacer(t *testing.T) {
	t.Parallel()
	var p roundPacer
	t0 := time.Unix(1000, 0)
	if run, _ := p.ask(t0); !run {
		t.Fatal("the first round asked for did not run at once")
	}
	p.ran(t0, t0.Add(75*time.Millisecond))
	// The interval's next tick, 100 ms after the last round started.
	run, wait := p.ask(t0.Add(100 * time.Millisecond))
	if run || wait != 725*time.Millisecond {
		t.Fatalf("tick 25 ms after a 75 ms round: run %v, wait %v; want deferred by 725ms", run, wait)
	}
	for _, at := range []time.Duration{200, 300, 500, 800} {
		if run, wait := p.ask(t0.Add(at * time.Millisecond)); run || wait != 0 {
			t.Errorf("ask at %d ms while a round is deferred: run %v, wait %v; want neither", at, run, wait)
		}
	}
	due := t0.Add(825 * time.Millisecond)
	p.ran(due, due.Add(3*time.Millisecond))
	// Rounds of 3 ms run at every tick of a 100 ms interval.
	for i := 1; i <= 3; i++ {
		at := due.Add(time.Duration(i) * 100 * time.Millisecond)
		if run, _ := p.ask(at); !run {
			t.Fatalf("tick %d after 3 ms rounds did not run", i)
		}
		p.ran(at, at.Add(3*time.Millisecond))
	}
	// Over a minute of 75 ms rounds asked for at every 100 ms tick, the
	// rounds hold the lock about a tenth of the time.
	var q roundPacer
	var next time.Time
	busy, round := time.Duration(0), 75*time.Millisecond
	for tick := t0; tick.Before(t0.Add(time.Minute)); tick = tick.Add(100 * time.Millisecond) {
		if q.deferred && !next.After(tick) {
			q.ran(next, next.Add(round))
			busy += round
		}
		switch run, wait := q.ask(tick); {
		case run:
			q.ran(tick, tick.Add(round))
			busy += round
		case wait > 0:
			next = tick.Add(wait)
		}
	}
	if share := float64(busy) / float64(time.Minute); share > 0.1 {
		t.Errorf("75 ms rounds asked for every 100 ms kept the lock %.0f%% of the time, want at most 10%%", 100*share)
	}
	// However slow the rounds, one runs at least maxGap after the last.
	b := roundPacer{maxGap: time.Second}
	b.ran(t0, t0.Add(300*time.Millisecond))
	if run, wait := b.ask(t0.Add(400 * time.Millisecond)); run || wait != 900*time.Millisecond {
		t.Errorf("tick 100 ms after a 300 ms round, gap bounded by 1s: run %v, wait %v; want deferred by 900ms", run, wait)
	}
	b.ran(t0, t0.Add(300*time.Millisecond))
	if run, _ := b.ask(t0.Add(1400 * time.Millisecond)); !run {
		t.Error("a round asked for a second after the last did not run")
	}
}
