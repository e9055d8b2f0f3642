package framework_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// onAgent matches offers of agent ag.
func onAgent(ag protocol.AgentID) func(protocol.Offer) bool {
	return func(o protocol.Offer) bool { return o.AgentID == ag }
}

// offeredBoth runs a framework without declared demand on a cluster of two
// agents until it holds an offer of each (whole agents).
func offeredBoth(t *testing.T) (*testcluster.Cluster, *sdktest.Recorder, *framework.Driver, protocol.Offer, protocol.Offer) {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{Agents: 2})
	rec := newRecorder()
	d := start(t, c, rec).d
	o0 := rec.WaitOffer(t, d, 0, onAgent(c.Agents()[0].ID()))
	o1 := rec.WaitOffer(t, d, 0, onAgent(c.Agents()[1].ID()))
	return c, rec, d, o0, o1
}

// TestDriver_DeclineWithAStaleOffer: a decline naming offers on two
// agents and one offer the master never made still declines the two (the
// request that names all three fails; the driver declines agent by
// agent): both agents come back once the refusal ends, not after the
// offer timeout.
func TestDriver_DeclineWithAStaleOffer(t *testing.T) {
	_, rec, d, o0, o1 := offeredBoth(t)
	stale := protocol.OfferID(string(o0.ID) + "0000")
	const refuse = time.Second
	mark := rec.OfferCount()
	declined := time.Now()
	if err := d.Decline(ctxT(t), []protocol.OfferID{o0.ID, stale, o1.ID}, refuse); err != nil {
		t.Fatal(err)
	}
	for _, o := range []protocol.Offer{o0, o1} {
		back := rec.WaitOffer(t, d, mark, onAgent(o.AgentID))
		if elapsed := time.Since(declined); elapsed < refuse {
			t.Fatalf("agent %s offered again after %s, within its refusal of %s", o.AgentID, elapsed, refuse)
		}
		if back.ID == o.ID {
			t.Fatalf("offer %s was never declined: it came back as it was", o.ID)
		}
	}
}

func TestDriver_DeclineRefuseFilter(t *testing.T) {
	_, rec, d, o0, o1 := offeredBoth(t)
	a0 := o0.AgentID
	const refuse = time.Second
	mark := rec.OfferCount()
	declined := time.Now()
	if err := d.Decline(ctxT(t), []protocol.OfferID{o0.ID, o1.ID}, refuse); err != nil {
		t.Fatal(err)
	}
	back := rec.WaitOffer(t, d, mark, onAgent(a0))
	if elapsed := time.Since(declined); elapsed < refuse {
		t.Fatalf("agent %s offered again after %s, refuse filter %s", a0, elapsed, refuse)
	}
	if back.ID == o0.ID {
		t.Fatal("the declined offer came back under the same ID")
	}
	// A decline with NoFilter is offered again at once.
	mark = rec.OfferCount()
	declined = time.Now()
	if err := d.Decline(ctxT(t), []protocol.OfferID{back.ID}, framework.NoFilter); err != nil {
		t.Fatal(err)
	}
	rec.WaitOffer(t, d, mark, onAgent(a0))
	if elapsed := time.Since(declined); elapsed >= refuse {
		t.Fatalf("offered again after %s with no filter", elapsed)
	}
}

func TestDriver_SuppressRevive(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	r := start(t, c, rec)
	d := r.d
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Suppress(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	mark := rec.OfferCount()
	if err := d.Decline(ctxT(t), []protocol.OfferID{o.ID}, framework.NoFilter); err != nil {
		t.Fatal(err)
	}
	if f, ok := c.WaitForLeader().View().Framework(d.ID()); !ok || !f.Suppressed {
		t.Fatalf("framework not suppressed in the state: %+v", f)
	}
	never(t, 300*time.Millisecond, "offered while suppressed", func() bool { return rec.OfferCount() > mark })
	if err := d.Revive(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	rec.WaitOffer(t, d, mark, nil)
}

func TestDriver_SuppressedFromTheStart(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	r := start(t, c, rec, framework.WithSuppressed())
	never(t, 300*time.Millisecond, "offered while subscribed suppressed", func() bool { return rec.OfferCount() > 0 })
	if err := r.d.Revive(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	rec.WaitOffer(t, r.d, 0, nil)
}

func TestDriver_KillAndReconcile(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	r := start(t, c, rec)
	d := r.d
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID},
		task("a", unit(), testcluster.RunUntilKilled()), task("b", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskRunning)
	rec.WaitState(t, "b", protocol.TaskRunning)

	// Reconciled statuses carry no UUID.
	reconciled := func(st protocol.TaskStatus) bool { return st.UUID == "" }
	// Explicit: only the named task, plus LOST for one the master never
	// heard of.
	// (A leader change may have had the driver reconcile on its own
	// already, while a was still STAGING: only statuses after this call
	// count.)
	beforeA := len(rec.Statuses("a"))
	if err := d.Reconcile(ctxT(t), protocol.ReconcileTask{TaskID: "a"}, protocol.ReconcileTask{TaskID: "ghost"}); err != nil {
		t.Fatal(err)
	}
	var st protocol.TaskStatus
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, s := range rec.Statuses("a")[beforeA:] {
			if reconciled(s.TaskStatus) {
				st = s.TaskStatus
				return nil
			}
		}
		return errors.New("no reconciled status of a yet")
	})
	if st.State != protocol.TaskRunning || st.UUID != "" {
		t.Fatalf("reconciled status %+v", st)
	}
	lost := rec.WaitState(t, "ghost", protocol.TaskLost)
	if lost.Reason != protocol.ReasonTaskUnknown {
		t.Fatalf("unknown task reconciled as %+v", lost)
	}
	// Implicit: every task.
	before := len(rec.Statuses("b"))
	if err := d.Reconcile(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		sts := rec.Statuses("b")
		for _, st := range sts[before:] {
			if st.UUID == "" && st.State == protocol.TaskRunning {
				return nil
			}
		}
		return fmt.Errorf("b: %v", states(sts))
	})

	if err := d.Kill(ctxT(t), "a", "", 0); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskKilled)
	if err := d.Kill(ctxT(t), "ghost", "", 0); !errors.Is(err, protocol.ErrUnknownTask) {
		t.Fatalf("kill of an unknown task: %v, want ErrUnknownTask", err)
	}
}

func TestDriver_AcceptOfUnknownOrRescindedOffer(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1, OfferTimeout: 300 * time.Millisecond})
	rec := newRecorder()
	r := start(t, c, rec)
	d := r.d
	ag := c.Agents()[0].ID()
	bogus := task("t1", unit(), testcluster.RunUntilKilled())
	bogus.AgentID = ag
	err := d.Launch(ctxT(t), []protocol.OfferID{"of-bogus"}, bogus)
	if !errors.Is(err, protocol.ErrUnknownOffer) {
		t.Fatalf("launch on a forged offer: %v, want ErrUnknownOffer", err)
	}
	// An offer held past the offer timeout is rescinded.
	o := rec.WaitOffer(t, d, 0, nil)
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, id := range rec.Rescinds() {
			if id == o.ID {
				return nil
			}
		}
		return errors.New("offer not rescinded yet")
	})
	for _, held := range d.Offers() {
		if held.ID == o.ID {
			t.Fatal("rescinded offer still listed")
		}
	}
	// A task that names no agent takes it from the offer; the driver no
	// longer holds this one, so it refuses the launch itself, as the
	// leader would refuse the offer (not the task).
	t2 := task("t2", unit(), testcluster.RunUntilKilled())
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, t2); !errors.Is(err, protocol.ErrUnknownOffer) {
		t.Fatalf("launch of an agentless task on a rescinded offer: %v, want ErrUnknownOffer", err)
	}
	t2.AgentID = ag // the driver forgot the offer, and its agent
	err = d.Launch(ctxT(t), []protocol.OfferID{o.ID}, t2)
	if !errors.Is(err, protocol.ErrUnknownOffer) {
		t.Fatalf("launch on a rescinded offer: %v, want ErrUnknownOffer", err)
	}
	// A refused accept changes nothing: the offer stays usable.
	o2 := rec.WaitOffer(t, d, 0, func(x protocol.Offer) bool { return x.ID != o.ID })
	huge := task("t3", protocol.Scalars(map[string]int64{protocol.ResCPUs: 1 << 40}), testcluster.RunUntilKilled())
	if err := d.Launch(ctxT(t), []protocol.OfferID{o2.ID}, huge); !errors.Is(err, protocol.ErrInsufficient) {
		t.Fatalf("launch beyond the offer: %v, want ErrInsufficient", err)
	}
	if err := d.Launch(ctxT(t), []protocol.OfferID{o2.ID}, task("t4", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatalf("launch after a refused one: %v", err)
	}
	rec.WaitState(t, "t4", protocol.TaskRunning)
}

func TestDriver_Teardown(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	r := start(t, c, rec)
	d := r.d
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskRunning)
	id := d.ID()
	if err := d.Teardown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := r.wait(t); err != nil {
		t.Fatalf("Run after teardown: %v", err)
	}
	if _, ok := c.WaitForLeader().View().Framework(id); ok {
		t.Fatal("framework still in the state")
	}
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, at := range c.Agents()[0].Tasks() {
			if at.State != protocol.TaskKilled {
				return fmt.Errorf("task %s is %s", at.Key, at.State)
			}
		}
		return nil
	})
	if err := d.Kill(ctxT(t), "a", "", 0); !errors.Is(err, framework.ErrNotRunning) {
		t.Fatalf("call after Run returned: %v, want ErrNotRunning", err)
	}
	if err := d.Run(ctxT(t)); !errors.Is(err, framework.ErrClosed) {
		t.Fatalf("second Run: %v, want ErrClosed", err)
	}
}
