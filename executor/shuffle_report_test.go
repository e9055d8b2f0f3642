package executor

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/executor/files"
)

func TestShuffleReporter_Totals(t *testing.T) {
	t.Parallel()
	r := newShuffleReporter()
	x, y := tr("fw-1", "c1", "ag-2"), tr("fw-1", "c1", "ag-3")
	r.record(x, 100, true)
	r.record(x, 40, false) // cut short: its bytes count, the transfer does not
	r.record(y, 7, true)
	select {
	case <-r.wake:
	default:
		t.Fatal("recording did not wake the sender")
	}
	pend := r.pending()
	if len(pend) != 2 || pend[0].key != x || pend[0].bytes != 140 || pend[0].transfers != 1 ||
		pend[1].key != y || pend[1].bytes != 7 || pend[1].transfers != 1 {
		t.Fatalf("pending %+v, want x 140 bytes 1 transfer, then y 7 bytes 1 transfer", pend)
	}

	// x changes while the report is on its way: only y is acknowledged.
	r.record(x, 60, true)
	r.reported(pend)
	pend = r.pending()
	if len(pend) != 1 || pend[0].key != x || pend[0].bytes != 200 || pend[0].transfers != 2 {
		t.Fatalf("pending after the report %+v, want x with 200 bytes and 2 transfers", pend)
	}
	r.reported(pend)
	if pend := r.pending(); len(pend) != 0 {
		t.Fatalf("pending after every report %+v, want none", pend)
	}

	// A new leader knows nothing: every flow is reported again.
	<-r.wake
	r.leaderChanged()
	select {
	case <-r.wake:
	default:
		t.Fatal("a leader change did not wake the sender")
	}
	if pend := r.pending(); len(pend) != 2 || pend[0].key != y || pend[1].key != x || pend[1].bytes != 200 {
		t.Fatalf("pending after a leader change %+v, want y and x again with their totals", pend)
	}
}

func TestShuffleReporter_Forgets(t *testing.T) {
	t.Parallel()
	r := newShuffleReporter()
	done, open := tr("fw-1", "c1", "ag-2"), tr("fw-1", "c2", "ag-2")
	r.record(done, 1, true)
	r.reported(r.pending())
	r.record(open, 1, true) // never reported: kept however old
	r.prune(time.Now().Add(shuffleForget / 2))
	if len(r.flows) != 2 {
		t.Fatalf("%d flows after an early prune, want 2", len(r.flows))
	}
	r.prune(time.Now().Add(shuffleForget + time.Second))
	if _, ok := r.flows[done]; ok || len(r.flows) != 1 {
		t.Fatalf("flows after the prune %v, want only the unreported one", r.flows)
	}
	// Reported again later, the flow starts over.
	r.record(done, 5, true)
	if pend := r.pending(); len(pend) != 2 {
		t.Fatalf("pending %+v, want both flows", pend)
	}
}

func TestShuffleReporter_Bounded(t *testing.T) {
	t.Parallel()
	r := newShuffleReporter()
	flow := func(i int) files.Transfer { return tr("fw-1", fmt.Sprintf("c%d", i), "ag-2") }
	for i := range maxShuffleFlows {
		r.record(flow(i), 1, true)
		if i == maxShuffleFlows/2 {
			r.reported(r.pending()) // the first half is reported
		}
	}
	r.record(flow(maxShuffleFlows), 1, true)
	if n := len(r.flows); n > maxShuffleFlows {
		t.Fatalf("%d flows, want at most %d", n, maxShuffleFlows)
	}
	// The oldest reported flows went first; nothing unreported was lost.
	if _, ok := r.flows[flow(0)]; ok {
		t.Fatal("the oldest reported flow was kept")
	}
	if pend := r.pending(); len(pend) != maxShuffleFlows-maxShuffleFlows/2 {
		t.Fatalf("%d flows pending, want the %d unreported ones", len(pend), maxShuffleFlows-maxShuffleFlows/2)
	}
}
