package framework_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

func TestDriver_LaunchAndAcknowledge(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec := newRecorder()
	d := prepare(t, c, rec, framework.WithName("launch"))
	// Declared before Run: the first offer is sized for these tasks.
	if err := d.Demand(ctxT(t), protocol.TaskShape{Resources: unit(), Count: 2}); err != nil {
		t.Fatal(err)
	}
	r := run(t, d)
	<-r.d.Ready()
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		if got := rec.RegisteredIDs(); len(got) != 1 || got[0] != d.ID() || d.ID() == "" {
			return fmt.Errorf("registered %v, driver id %q", got, d.ID())
		}
		return nil
	})
	o := rec.WaitOffer(t, d, 0, nil)
	if got := o.Resources.Scalar(protocol.ResCPUs); got != 2000 {
		t.Fatalf("offer holds %d milli-CPUs, want two tasks' worth (2000)", got)
	}
	run1 := task("run", unit(), testcluster.RunUntilKilled())
	fin := task("fin", unit(), testcluster.Finish(20*time.Millisecond))
	if err := d.Launch(ctxT(t), []protocol.OfferID{o.ID}, run1, fin); err != nil {
		t.Fatal(err)
	}
	if len(d.Offers()) != 0 {
		t.Fatalf("offers still held after the launch: %v", d.Offers())
	}
	running := rec.WaitState(t, "run", protocol.TaskRunning)
	rec.WaitState(t, "fin", protocol.TaskFinished)
	if running.UUID == "" || running.AgentID != c.Agents()[0].ID() {
		t.Fatalf("running status %+v", running)
	}
	// Acknowledged: the leader marks the RUNNING update acknowledged, and
	// forgets the finished task once its terminal update is.
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		v := c.WaitForLeader().View()
		rt, ok := v.Task(d.ID(), "run")
		if !ok || !rt.Acked || rt.StatusUUID != running.UUID {
			return errors.New("RUNNING not acknowledged yet")
		}
		if _, ok := v.Task(d.ID(), "fin"); ok {
			return errors.New("finished task still held")
		}
		return nil
	})
	if got := states(rec.Statuses("fin")); len(got) != 3 {
		t.Fatalf("fin statuses %v, want STARTING RUNNING FINISHED once each", got)
	}
	if errs := rec.Errors(); len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
}
