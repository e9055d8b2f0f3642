package executor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
	"github.com/hashicorp/go-hclog"
)

// pacedSend sends size bytes of a transfer through the shuffle server as
// the file server does, a chunk of at most chunk bytes per Pace, and
// returns when its last chunk was granted: when the port has carried it.
func pacedSend(ctx context.Context, s *shuffleServer, t files.Transfer, size, chunk int) error {
	flow, err := s.Acquire(ctx, t)
	if err != nil {
		return err
	}
	sent := 0
	defer func() { flow.Done(int64(sent), sent == size) }()
	for sent < size {
		k := min(chunk, size-sent)
		if err := flow.Pace(ctx, k, min(chunk, size-sent-k)); err != nil {
			return err
		}
		flow.Sent(int64(k))
		sent += k
	}
	return nil
}

// paceSend is one transfer of a pacer test: it starts after a delay,
// through server (the test's own when nil).
type paceSend struct {
	name   string // the result's key
	t      files.Transfer
	after  time.Duration
	size   int
	chunk  int
	server *shuffleServer
}

// runPaced runs the sends through a shuffle server of egress rate with
// the priorities given, in a synctest bubble's time, and returns when
// each ended, from the start.
func runPaced(t *testing.T, rate int64, prios []protocol.CoflowPriority, sends ...paceSend) map[string]time.Duration {
	t.Helper()
	s := newShuffleServer(Config{ShuffleSlots: 4, ShuffleEgress: rate}, hclog.NewNullLogger())
	if err := s.gate.setPriorities(1, prios); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go s.pacer.run(ctx)
	for i := range sends {
		sends[i].server = s
	}
	return runSends(ctx, t, sends)
}

// runSends runs the sends side by side, each through its server, and
// returns when each ended, from the start.
func runSends(ctx context.Context, t *testing.T, sends []paceSend) map[string]time.Duration {
	start := time.Now()
	var (
		mu  sync.Mutex
		end = map[string]time.Duration{}
		wg  sync.WaitGroup
	)
	for _, ps := range sends {
		wg.Go(func() {
			time.Sleep(ps.after)
			if err := pacedSend(ctx, ps.server, ps.t, ps.size, ps.chunk); err != nil {
				t.Errorf("%s: %v", ps.name, err)
			}
			mu.Lock()
			end[ps.name] = time.Since(start)
			mu.Unlock()
		})
	}
	wg.Wait()
	return end
}

// checkEnds checks each end within 10% of the one worked out on paper.
func checkEnds(t *testing.T, end, want map[string]time.Duration) {
	t.Helper()
	for name, w := range want {
		if got := end[name]; got < w*9/10 || got > w*11/10 {
			t.Errorf("%s ended at %v, want %v within 10%%", name, got, w)
		}
	}
}

// TestEgressPacer_TwoCoflowsOnACappedPort: coflow b (2 MiB, rank 1) has
// the 4 MiB/s port to itself until coflow a (4 MiB, rank 0) arrives at
// 0.3 s. On paper, with the port at its whole rate to the best-ranked
// flow: a takes the port and ends at 0.3 + 4/4 = 1.3 s; b sent 1.2 MiB
// before it and the remaining 0.8 MiB after, ending at 1.3 + 0.2 = 1.5 s.
// Without the priorities (first come, first served) b would end at 0.5 s
// and a at 1.5 s. The chunks are the file server's (256 KiB, 62.5 ms of
// the port): a waits for the chunk b is sending when it arrives.
func TestEgressPacer_TwoCoflowsOnACappedPort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		end := runPaced(t, 4<<20, []protocol.CoflowPriority{
			{FrameworkID: "fw", CoflowID: "a", Rank: 0}, {FrameworkID: "fw", CoflowID: "b", Rank: 1},
		},
			paceSend{name: "b", t: files.Transfer{Framework: "fw", Coflow: "b", Dst: "ag-2"}, size: 2 << 20, chunk: 256 << 10},
			paceSend{name: "a", t: files.Transfer{Framework: "fw", Coflow: "a", Dst: "ag-2"}, after: 300 * time.Millisecond, size: 4 << 20, chunk: 256 << 10})
		checkEnds(t, end, map[string]time.Duration{"a": 1300 * time.Millisecond, "b": 1500 * time.Millisecond})
		// The port never ran faster than its rate: 6 MiB took 1.5 s.
		if total := time.Since(start); total < 1500*time.Millisecond {
			t.Errorf("6 MiB through a 4 MiB/s port in %v", total)
		}
	})
}

// TestEgressPacer_FIFOInsideARank: two transfers of one rank are served
// one after the other, in arrival order, each at the whole port (not
// side by side, which would end both at 2 s); an unranked one comes after.
func TestEgressPacer_FIFOInsideARank(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends []paceSend
		for i, dst := range []string{"first", "second", "unranked"} {
			coflow := "c"
			if dst == "unranked" {
				coflow = "other"
			}
			sends = append(sends, paceSend{name: dst, t: files.Transfer{Framework: "fw", Coflow: coflow, Dst: dst},
				after: time.Duration(i) * time.Millisecond, size: 1 << 20, chunk: 64 << 10})
		}
		end := runPaced(t, 1<<20, []protocol.CoflowPriority{{FrameworkID: "fw", CoflowID: "c", Rank: 0}}, sends...)
		checkEnds(t, end, map[string]time.Duration{"first": time.Second, "second": 2 * time.Second, "unranked": 3 * time.Second})
	})
}

// TestEgressPacer_UnrankedShareRoundRobin: two transfers the leader did
// not rank share the port a chunk each: 1 MiB each through 1 MiB/s, both
// end at about 2 s (first come, first served would end one at 1 s).
func TestEgressPacer_UnrankedShareRoundRobin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sends []paceSend
		for i, dst := range []string{"one", "two"} {
			sends = append(sends, paceSend{name: dst, t: files.Transfer{Framework: "fw", Coflow: "c", Dst: dst},
				after: time.Duration(i) * time.Millisecond, size: 1 << 20, chunk: 64 << 10})
		}
		end := runPaced(t, 1<<20, nil, sends...)
		checkEnds(t, end, map[string]time.Duration{"one": 2 * time.Second, "two": 2 * time.Second})
	})
}

// TestEgressPacer_ForeignCoflowGetsNoRank: a tenant whose download names
// another framework's ranked coflow gets no rank of it (ranks are keyed by
// the framework its token names): arriving first, it still yields the port
// to that framework's transfer, which ends at 1 s as if alone, and ends
// itself at 2 s.
func TestEgressPacer_ForeignCoflowGetsNoRank(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		end := runPaced(t, 1<<20, []protocol.CoflowPriority{{FrameworkID: "fw", CoflowID: "a", Rank: 0}},
			paceSend{name: "tenant", t: files.Transfer{Framework: "evil", Coflow: "a", Dst: "ag-2"}, size: 1 << 20, chunk: 64 << 10},
			paceSend{name: "owner", t: files.Transfer{Framework: "fw", Coflow: "a", Dst: "ag-2"}, after: time.Millisecond, size: 1 << 20, chunk: 64 << 10})
		checkEnds(t, end, map[string]time.Duration{"owner": time.Second, "tenant": 2 * time.Second})
	})
}

// TestEgressPacer_Stop: when the agent stops, a transfer waiting for the
// port fails with ErrShuffleStopped, and so does a later one.
func TestEgressPacer_Stop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newShuffleServer(Config{ShuffleSlots: 4, ShuffleEgress: 1 << 10}, hclog.NewNullLogger())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { s.pacer.run(ctx); close(done) }()
		tr := files.Transfer{Framework: "fw", Coflow: "c", Dst: "ag-2"}
		errc := make(chan error, 1)
		go func() { errc <- pacedSend(t.Context(), s, tr, 1<<20, 1<<10) }()
		time.Sleep(5 * time.Second) // some chunks through, one waiting
		cancel()
		<-done
		if err := <-errc; !errors.Is(err, files.ErrShuffleStopped) {
			t.Fatalf("waiting transfer: %v, want ErrShuffleStopped", err)
		}
		if err := pacedSend(t.Context(), s, tr, 10, 10); !errors.Is(err, files.ErrShuffleStopped) {
			t.Fatalf("later transfer: %v, want ErrShuffleStopped", err)
		}
	})
}
