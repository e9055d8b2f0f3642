package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// gateTest drives a shuffle gate: each transfer waits in its own
// goroutine, and the grants arrive on a channel in the order made.
type gateTest struct {
	t       *testing.T
	g       *shuffleGate
	granted chan grant
}

// grant is a transfer granted a slot, with the function that frees it.
type grant struct {
	t       files.Transfer
	release func()
}

func newGateTest(t *testing.T, slots int) *gateTest {
	return &gateTest{t: t, g: newShuffleGate(slots), granted: make(chan grant, 16)}
}

// wait starts a transfer and returns once it is in line, so that the
// order of calls is the order of arrival. It returns the transfer's
// acquire error, delivered when acquire returns with one.
func (gt *gateTest) wait(ctx context.Context, tr files.Transfer) <-chan error {
	gt.t.Helper()
	before := len(gt.g.queue())
	errc := make(chan error, 1)
	go func() {
		release, err := gt.g.acquire(ctx, tr)
		if err != nil {
			errc <- err
			return
		}
		gt.granted <- grant{tr, release}
	}()
	testutil.WaitFor(gt.t, 10*time.Second, time.Millisecond, func() error {
		if n := len(gt.g.queue()); n != before+1 {
			return fmt.Errorf("%d transfers in line, want %d", n, before+1)
		}
		return nil
	})
	return errc
}

// next returns the next grant.
func (gt *gateTest) next() grant {
	gt.t.Helper()
	select {
	case g := <-gt.granted:
		return g
	case <-time.After(10 * time.Second):
		gt.t.Fatal("no transfer granted")
		return grant{}
	}
}

// none fails if a grant was made that the test did not expect.
func (gt *gateTest) none() {
	gt.t.Helper()
	select {
	case g := <-gt.granted:
		gt.t.Fatalf("unexpected grant to %+v", g.t)
	default:
	}
}

// hold takes the gate's only slot.
func (gt *gateTest) hold() func() {
	gt.t.Helper()
	release, err := gt.g.acquire(context.Background(), files.Transfer{Framework: "fw-0", Coflow: "hold", Dst: "ag-0"})
	if err != nil {
		gt.t.Fatal(err)
	}
	return release
}

// free returns the gate's free slots.
func (gt *gateTest) free() int {
	gt.g.mu.Lock()
	defer gt.g.mu.Unlock()
	return gt.g.free
}

func tr(fw, coflow, dst string) files.Transfer {
	return files.Transfer{Framework: fw, Coflow: coflow, Dst: dst}
}

func prio(fw, coflow, dst string, rank int) protocol.CoflowPriority {
	return protocol.CoflowPriority{FrameworkID: protocol.FrameworkID(fw), CoflowID: coflow, Dst: protocol.AgentID(dst), Rank: rank}
}

func TestShuffleGate_GrantsByRank(t *testing.T) {
	t.Parallel()
	gt := newGateTest(t, 1)
	release := gt.hold()
	if err := gt.g.setPriorities(1, []protocol.CoflowPriority{
		prio("fw-1", "a", "", 2), prio("fw-1", "b", "", 0),
		// c's flow to ag-9 ranks on its own, ahead of the rest of c.
		prio("fw-1", "c", "", 5), prio("fw-1", "c", "ag-9", 1),
	}); err != nil {
		t.Fatal(err)
	}
	arrivals := []files.Transfer{
		tr("fw-1", "a", "ag-1"),
		tr("fw-1", "unranked", "ag-1"),
		tr("fw-1", "b", "ag-1"),
		tr("fw-1", "c", "ag-9"),
		tr("fw-1", "c", "ag-8"),
		tr("fw-2", "b", "ag-1"), // another framework's coflow b: unranked
	}
	for _, a := range arrivals {
		gt.wait(context.Background(), a)
	}
	want := []files.Transfer{
		tr("fw-1", "b", "ag-1"), tr("fw-1", "c", "ag-9"), tr("fw-1", "a", "ag-1"),
		tr("fw-1", "c", "ag-8"), tr("fw-1", "unranked", "ag-1"), tr("fw-2", "b", "ag-1"),
	}
	if got := gt.g.queue(); !slices.Equal(got, want) {
		t.Fatalf("queue %v, want %v", got, want)
	}
	gt.none()
	for _, w := range want {
		release()
		g := gt.next()
		if g.t != w {
			t.Fatalf("granted %+v, want %+v", g.t, w)
		}
		gt.none() // one slot: nobody else until it is released
		release = g.release
	}
	release()
	release() // a second release gives back nothing
	if n := gt.free(); n != 1 {
		t.Fatalf("%d free slots after every release, want 1", n)
	}
}

func TestShuffleGate_NewPrioritiesReorderTheLine(t *testing.T) {
	t.Parallel()
	gt := newGateTest(t, 1)
	release := gt.hold()
	x, y, z := tr("fw-1", "a", "ag-1"), tr("fw-1", "b", "ag-1"), tr("fw-1", "c", "ag-1")
	for _, w := range []files.Transfer{x, y, z} {
		gt.wait(context.Background(), w)
	}
	if got := gt.g.queue(); !slices.Equal(got, []files.Transfer{x, y, z}) {
		t.Fatalf("unranked: queue %v, want arrival order", got)
	}
	if err := gt.g.setPriorities(1, []protocol.CoflowPriority{prio("fw-1", "a", "", 1), prio("fw-1", "b", "", 0)}); err != nil {
		t.Fatal(err)
	}
	if got := gt.g.queue(); !slices.Equal(got, []files.Transfer{y, x, z}) {
		t.Fatalf("after the first command: queue %v, want b, a, c", got)
	}
	// The next command replaces the ranks: b is no longer listed.
	if err := gt.g.setPriorities(2, []protocol.CoflowPriority{prio("fw-1", "c", "", 0), prio("fw-1", "a", "", 1)}); err != nil {
		t.Fatal(err)
	}
	if got := gt.g.queue(); !slices.Equal(got, []files.Transfer{z, x, y}) {
		t.Fatalf("after the second command: queue %v, want c, a, b", got)
	}
	release()
	if g := gt.next(); g.t != z {
		t.Fatalf("granted %+v first, want %+v", g.t, z)
	} else {
		g.release()
	}
	if g := gt.next(); g.t != x {
		t.Fatalf("granted %+v second, want %+v", g.t, x)
	} else {
		g.release()
	}
	gt.next().release()
}

func TestShuffleGate_StaleEpochDropped(t *testing.T) {
	t.Parallel()
	gt := newGateTest(t, 1)
	defer gt.hold()()
	a, b := tr("fw-1", "a", "ag-1"), tr("fw-1", "b", "ag-1")
	gt.wait(context.Background(), a)
	gt.wait(context.Background(), b)
	bFirst := []protocol.CoflowPriority{prio("fw-1", "b", "", 0), prio("fw-1", "a", "", 1)}
	aFirst := []protocol.CoflowPriority{prio("fw-1", "a", "", 0), prio("fw-1", "b", "", 1)}
	steps := []struct {
		epoch   uint64
		prios   []protocol.CoflowPriority
		applied bool
		want    []files.Transfer
	}{
		{5, bFirst, true, []files.Transfer{b, a}},
		{3, aFirst, false, []files.Transfer{b, a}}, // older
		{0, aFirst, true, []files.Transfer{a, b}},  // no epoch: always applied
		{4, bFirst, false, []files.Transfer{a, b}}, // still older than 5
		{5, bFirst, true, []files.Transfer{b, a}},  // the same epoch again
	}
	for i, s := range steps {
		err := gt.g.setPriorities(s.epoch, s.prios)
		if (err == nil) != s.applied {
			t.Fatalf("step %d (epoch %d): got %v, want applied=%v", i, s.epoch, err, s.applied)
		}
		if got := gt.g.queue(); !slices.Equal(got, s.want) {
			t.Fatalf("step %d (epoch %d): queue %v, want %v", i, s.epoch, got, s.want)
		}
	}
	gt.g.stop() // frees the waiters
}

func TestShuffleGate_CancelledWaiterLeaves(t *testing.T) {
	t.Parallel()
	gt := newGateTest(t, 1)
	release := gt.hold()
	ctx, cancel := context.WithCancel(context.Background())
	first, second := tr("fw-1", "a", "ag-1"), tr("fw-1", "b", "ag-1")
	errc := gt.wait(ctx, first)
	gt.wait(context.Background(), second)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled waiter: got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled waiter did not return")
	}
	if got := gt.g.queue(); !slices.Equal(got, []files.Transfer{second}) {
		t.Fatalf("queue %v, want only %+v", got, second)
	}
	release()
	g := gt.next()
	if g.t != second {
		t.Fatalf("granted %+v, want %+v", g.t, second)
	}
	g.release()
	// The slot is back: a new transfer gets it at once.
	r, err := gt.g.acquire(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	r()
	if n := gt.free(); n != 1 {
		t.Fatalf("%d free slots, want 1", n)
	}
}

func TestShuffleGate_StopFailsWaiters(t *testing.T) {
	t.Parallel()
	gt := newGateTest(t, 1)
	release := gt.hold()
	errc := gt.wait(context.Background(), tr("fw-1", "a", "ag-1"))
	gt.g.stop()
	select {
	case err := <-errc:
		if !errors.Is(err, files.ErrShuffleStopped) {
			t.Fatalf("waiter: got %v, want ErrShuffleStopped", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not return on stop")
	}
	if _, err := gt.g.acquire(context.Background(), tr("fw-1", "b", "ag-1")); !errors.Is(err, files.ErrShuffleStopped) {
		t.Fatalf("acquire after stop: got %v, want ErrShuffleStopped", err)
	}
	release() // the transfer being served ends normally
}
