package loadgen

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/allot-project/allot/protocol"
)

// declarations records what a framework declared, call by call.
type declarations struct {
	mu    sync.Mutex
	calls [][]protocol.TaskShape
}

func (d *declarations) Demand(_ context.Context, shapes ...protocol.TaskShape) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, shapes)
	return nil
}

func (d *declarations) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.calls)
}

func (d *declarations) last() []protocol.TaskShape {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[len(d.calls)-1]
}

// TestBusy_declaresZeroNotNothing: a framework that misses no task
// declares its task shape with a count of zero. An empty declaration
// would return it to the undeclared state, in which the master offers it
// every idle agent's remainder each round.
func TestBusy_declaresZeroNotNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		b := newBusy(ctx, "fw", newRecorder(), 2, time.Second, 1)
		rec := &declarations{}
		go b.declare(ctx, rec, time.Second)
		synctest.Wait()
		if got := rec.last(); len(got) != 1 || got[0].Count != 2 {
			t.Fatalf("declared %+v with nothing running, want one shape of count 2", got)
		}
		offer := protocol.Offer{ID: "of-A-1", AgentID: "ag-1",
			Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 4000, protocol.ResMem: 8192})}
		if infos := b.plan(offer, time.Now()); len(infos) != 2 {
			t.Fatalf("planned %d tasks, want 2", len(infos))
		}
		time.Sleep(time.Second) // the next check, on the bubble's clock
		synctest.Wait()
		got := rec.last()
		if len(got) != 1 || got[0].Count != 0 || !got[0].Resources.Equal(b.task) {
			t.Fatalf("declared %+v with every task planned, want the task's shape with count 0", got)
		}
		calls := rec.count()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if n := rec.count(); n != calls {
			t.Fatalf("declared again %d times with nothing changed", n-calls)
		}
	})
}
