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

func TestDriver_LeaderFailover(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 2})
	rec := newRecorder()
	d := prepare(t, c, rec, framework.WithFailoverTimeout(time.Minute))
	if err := d.Demand(ctxT(t), protocol.TaskShape{Resources: unit(), Count: 4}); err != nil {
		t.Fatal(err)
	}
	run(t, d)
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskRunning)

	old := c.KillLeader()
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if rec.Reregistrations() == 0 || rec.Disconnects() == 0 {
			return fmt.Errorf("reregistered %d times, disconnected %d times", rec.Reregistrations(), rec.Disconnects())
		}
		return nil
	})
	if c.LeaderIndex() == old {
		t.Fatal("the killed master leads")
	}
	// Offers of the old leader are void: rescinded for the scheduler.
	for _, held := range d.Offers() {
		if held.ID == o.ID {
			t.Fatal("an offer of the old leader is still held")
		}
	}
	// The driver reconciled: the running task is reported again (without a
	// UUID: reconciliation needs no acknowledgement).
	rec.WaitStatus(t, "a", "RUNNING from reconciliation", func(st sdktest.Arrival) bool {
		return st.State == protocol.TaskRunning && st.UUID == ""
	})
	// Its demand was declared again, minus the launch: offers keep coming,
	// sized for the three tasks left.
	o2 := rec.WaitOffer(t, d, 0, func(x protocol.Offer) bool { return x.ID != o.ID })
	if cpus := o2.Resources.Scalar(protocol.ResCPUs); cpus > 3000 {
		t.Fatalf("offer after failover holds %d milli-CPUs, demand left is 3000", cpus)
	}
	if err := d.Launch(ctxT(t), []protocol.OfferID{o2.ID}, task("b", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "b", protocol.TaskRunning)
	// Nothing was launched twice.
	n := 0
	for _, a := range c.Agents() {
		for _, at := range a.Tasks() {
			n++
			if at.Conflicts != 0 {
				t.Errorf("task %s launched with conflicting infos", at.Key)
			}
		}
	}
	if n != 2 {
		t.Fatalf("agents run %d tasks, want 2", n)
	}
	if errs := rec.Errors(); len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
}

func TestDriver_SchedulerFailover(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec1 := newRecorder()
	r1 := start(t, c, rec1, framework.WithFailoverTimeout(time.Minute), framework.WithName("sched"))
	o := rec1.WaitOffer(t, r1.d, 0, nil)
	if err := r1.d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec1.WaitState(t, "a", protocol.TaskRunning)
	id := r1.d.ID()
	// The first scheduler goes away.
	r1.stop()
	if err := r1.wait(t); err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	rec2 := newRecorder()
	r2 := start(t, c, rec2, framework.WithFailoverTimeout(time.Minute), framework.WithName("sched"),
		framework.WithFrameworkID(id))
	if r2.d.ID() != id {
		t.Fatalf("resumed as %s, want %s", r2.d.ID(), id)
	}
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if got := rec2.RegisteredIDs(); len(got) != 1 || got[0] != id {
			return fmt.Errorf("registered %v", got)
		}
		return nil
	})
	// It learns of the running task by reconciliation, and controls it.
	rec2.WaitState(t, "a", protocol.TaskRunning)
	if err := r2.d.Kill(ctxT(t), "a", "", 0); err != nil {
		t.Fatal(err)
	}
	rec2.WaitState(t, "a", protocol.TaskKilled)
	// And is offered what the task freed.
	rec2.WaitOffer(t, r2.d, 0, nil)
}

func TestDriver_UnknownFramework(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	rec := newRecorder()
	r := startNoWait(t, c, rec, framework.WithFrameworkID("fw-NOSUCHFRAMEWORK"))
	err := r.wait(t)
	if !errors.Is(err, protocol.ErrUnknownFramework) {
		t.Fatalf("Run: %v, want ErrUnknownFramework", err)
	}
	if errs := rec.Errors(); len(errs) != 1 || !errors.Is(errs[0], protocol.ErrUnknownFramework) {
		t.Fatalf("Error callbacks: %v", errs)
	}
}

func TestDriver_RemovedWhileRunning(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	rec := newRecorder()
	r1 := start(t, c, rec, framework.WithFailoverTimeout(time.Minute))
	// A client that tracks no session (so takes nothing over) tears the
	// framework down; the scheduler stops hearing heartbeats, subscribes
	// again and learns it.
	if err := rawCall(t, c, protocol.VerbTeardown, 0, protocol.TeardownRequest{FrameworkID: r1.d.ID()}); err != nil {
		t.Fatal(err)
	}
	if err := r1.wait(t); !errors.Is(err, protocol.ErrUnknownFramework) {
		t.Fatalf("Run: %v, want ErrUnknownFramework", err)
	}
	if errs := rec.Errors(); len(errs) == 0 || !errors.Is(errs[len(errs)-1], protocol.ErrUnknownFramework) {
		t.Fatalf("Error callbacks: %v", errs)
	}
}

func TestDriver_NATSReconnect(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	p := testutil.NewProxy(t, c.NATSURL())
	rec := newRecorder()
	d, err := framework.NewDriver(rec, framework.WithNATSURLs(p.URL()), framework.WithFailoverTimeout(time.Minute),
		framework.WithRequestTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	run(t, d)
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskRunning)
	p.Cut()
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if rec.Disconnects() == 0 || rec.Reregistrations() == 0 {
			return fmt.Errorf("disconnected %d times, reregistered %d times", rec.Disconnects(), rec.Reregistrations())
		}
		return nil
	})
	rec.WaitStatus(t, "a", "RUNNING from reconciliation", func(st sdktest.Arrival) bool {
		return st.State == protocol.TaskRunning && st.UUID == ""
	})
	if err := d.Kill(ctxT(t), "a", "", 0); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskKilled)
}

func TestDriver_ManualAcksAndDuplicates(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	r := start(t, c, rec, framework.WithManualAcks(), framework.WithFailoverTimeout(time.Minute))
	d := r.d
	o := rec.WaitOffer(t, d, 0, nil)
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	// Updates come one at a time: RUNNING only once STARTING is
	// acknowledged.
	starting := rec.WaitState(t, "a", protocol.TaskStarting)
	if err := d.Acknowledge(ctxT(t), starting.TaskStatus); err != nil {
		t.Fatal(err)
	}
	running := rec.WaitState(t, "a", protocol.TaskRunning)
	acked := func() bool {
		tk, ok := c.WaitForLeader().View().Task(d.ID(), "a")
		return ok && tk.Acked && tk.StatusUUID == running.UUID
	}
	if acked() {
		t.Fatal("acknowledged without Acknowledge")
	}
	// A new leader resends the unacknowledged update; the driver drops the
	// duplicate. Reconciliation, which follows it, carries no UUID.
	c.KillLeader()
	rec.WaitStatus(t, "a", "RUNNING from reconciliation", func(st sdktest.Arrival) bool {
		return st.State == protocol.TaskRunning && st.UUID == ""
	})
	n := 0
	for _, st := range rec.Statuses("a") {
		if st.UUID == running.UUID {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("update %s delivered %d times", running.UUID, n)
	}
	if err := d.Acknowledge(ctxT(t), running.TaskStatus); err != nil {
		t.Fatal(err)
	}
	if !acked() {
		t.Fatal("not acknowledged after Acknowledge returned")
	}
	// Statuses without a UUID need no acknowledgement.
	if err := d.Acknowledge(ctxT(t), protocol.TaskStatus{TaskID: "a"}); err != nil {
		t.Fatal(err)
	}
}
