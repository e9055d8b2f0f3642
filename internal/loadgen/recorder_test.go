package loadgen

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestRecorder_calmLeavesOutWhatAKillInterrupted: a launch whose offer
// arrived before a kill and which was heard after it is left out of the
// calm figures, and only it; so is a launch call the kill fell inside of.
func TestRecorder_calmLeavesOutWhatAKillInterrupted(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := newRecorder()
	r.measure(true)
	r.onWire(at(0), at(20))      // before the kill
	r.onWire(at(900), at(2500))  // in flight at the kill (1,000 ms)
	r.onWire(at(1000), at(1000)) // offered and heard at the kill's instant
	r.onWire(at(1200), at(1250)) // after it
	r.accepted(at(950), at(1300))
	r.accepted(at(1400), at(1410))
	r.killed(at(1000))
	l := r.latencies()
	ms := func(ds ...int) []time.Duration {
		var out []time.Duration
		for _, d := range ds {
			out = append(out, time.Duration(d)*time.Millisecond)
		}
		return out
	}
	if want := ms(20, 1600, 0, 50); !slices.Equal(l.offerToWire, want) {
		t.Errorf("offerToWire = %v, want %v", l.offerToWire, want)
	}
	if want := ms(20, 50); !slices.Equal(l.offerToWireCalm, want) {
		t.Errorf("offerToWireCalm = %v, want %v", l.offerToWireCalm, want)
	}
	if want := ms(350, 10); !slices.Equal(l.acceptCall, want) {
		t.Errorf("acceptCall = %v, want %v", l.acceptCall, want)
	}
	if want := ms(10); !slices.Equal(l.acceptCallCalm, want) {
		t.Errorf("acceptCallCalm = %v, want %v", l.acceptCallCalm, want)
	}
	r.measure(false)
	r.onWire(at(3000), at(3001))
	if n := len(r.latencies().offerToWire); n != 4 {
		t.Errorf("%d wire samples after the window closed, want 4", n)
	}
}

// TestBusy_heardFirst: a launch heard on the wire is measured once,
// though the master sends it again; a task launched on an uncertain call
// is measured too, and an ended task not at all.
func TestBusy_heardFirst(t *testing.T) {
	b := newBusy(context.Background(), "fw", newRecorder(), 10, time.Second, 1)
	offer := protocol.Offer{ID: "of-A-1", AgentID: "ag-1",
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 3000, protocol.ResMem: 8192})}
	offered := time.Now()
	infos := b.plan(offer, offered)
	if len(infos) != 3 {
		t.Fatalf("planned %d tasks on 3 CPUs, want 3", len(infos))
	}
	b.mu.Lock()
	b.unsure[infos[1].TaskID] = b.live[infos[1].TaskID]
	delete(b.live, infos[1].TaskID)
	delete(b.live, infos[2].TaskID)
	b.mu.Unlock()
	for i, want := range []bool{true, true, false} {
		if at, ok := b.heardFirst(infos[i].TaskID); ok != want || (ok && !at.Equal(offered)) {
			t.Errorf("task %d heard first: %v at %v, want %v at %v", i, ok, at, want, offered)
		}
		if _, ok := b.heardFirst(infos[i].TaskID); ok {
			t.Errorf("task %d heard first twice", i)
		}
	}
}

func TestMedian(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{5 * ms}, 5 * ms},
		{[]time.Duration{9 * ms, 1 * ms, 2 * ms}, 2 * ms},
		{[]time.Duration{1 * ms, 2 * ms, 4 * ms, 9 * ms}, 3 * ms},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
