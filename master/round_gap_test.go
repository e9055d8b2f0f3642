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
