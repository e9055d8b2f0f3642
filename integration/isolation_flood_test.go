package integration

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Flood parameters: 20 requests a second for 30 s, each an accept of as
// many tasks as a request may carry (about 4 MiB), for a framework that
// is not the sender's.
const (
	floodRate     = 20
	floodDuration = 30 * time.Second
	// floodHeapSlack is how far above its baseline the heap may grow.
	floodHeapSlack = 64 << 20
)

// TestIsolation_Flood: a tenant floods the leader with well-formed but
// unauthorized requests (accepts of ~130,000 tasks for another tenant's
// framework). Each is refused before it is decoded, so the process's live
// heap stays within 64 MiB of its baseline throughout, and the other
// tenant's calls are answered within a second all along. (Decoding one such
// request costs about 60 MB.) It measures time and memory, so it runs
// without the race detector, which multiplies the cost of every copy of
// these 3.8 MB messages: `make test` runs it in a pass of its own.
func TestIsolation_Flood(t *testing.T) {
	if raceEnabled {
		t.Skip("measured without the race detector (make test runs it on its own)")
	}
	tc := newTenantCluster(t, false)
	data := floodAccept(t, tc.bob.d.ID())
	subject, err := protocol.Subjects{}.APIFramework("alice", tc.bob.d.ID(), protocol.VerbAccept)
	if err != nil {
		t.Fatal(err)
	}
	baseline := liveHeap()
	t.Logf("flood request: %d bytes; live heap before: %d MiB", len(data), baseline>>20)

	ctx, cancel := context.WithTimeout(context.Background(), floodDuration)
	defer cancel()
	var sent, refused atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second / floodRate)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sent.Add(1)
			go func() {
				rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer rcancel()
				msg, err := tc.alice.nc.RequestWithContext(rctx, subject, data)
				if err == nil && protocol.DecodeReply(msg.Data, nil) != nil {
					refused.Add(1)
				}
			}()
		}
	}()
	var peak uint64
	for ctx.Err() == nil {
		start := time.Now()
		cctx, ccancel := context.WithTimeout(context.Background(), time.Second)
		err := tc.bob.d.Reconcile(cctx, protocol.ReconcileTask{TaskID: bobLong})
		ccancel()
		if err != nil {
			t.Fatalf("bob's call during the flood (after %d requests): %v", sent.Load(), err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("bob's call took %s during the flood", d)
		}
		peak = max(peak, liveHeap())
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	<-done
	t.Logf("%d flood requests sent, %d refused; live heap peak %d MiB, baseline %d MiB",
		sent.Load(), refused.Load(), peak>>20, baseline>>20)
	if peak > baseline+floodHeapSlack {
		t.Fatalf("live heap reached %d MiB during the flood, baseline %d MiB: more than 64 MiB above", peak>>20, baseline>>20)
	}
	if n := sent.Load(); n < floodRate*int64(floodDuration/time.Second)*9/10 {
		t.Fatalf("only %d flood requests sent", n)
	}
	if refused.Load() == 0 {
		t.Fatal("no flood request was answered with a refusal")
	}
	tc.bobCarriesOn(t, "after-flood")
}

// floodAccept encodes an accept for framework fw of 130,000 tasks: about
// 3.8 MB, within the largest message.
func floodAccept(t *testing.T, fw protocol.FrameworkID) []byte {
	t.Helper()
	infos := make([]protocol.TaskInfo, 130_000)
	for i := range infos {
		infos[i].TaskID = protocol.TaskID("t" + strconv.Itoa(i))
	}
	data, err := protocol.Encode(protocol.MsgAcceptRequest, protocol.AcceptRequest{FrameworkID: fw,
		OfferIDs: []protocol.OfferID{"of-x"}, Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: infos}}})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
