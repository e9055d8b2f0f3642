package sdktest_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/protocol"
)

// short keeps the waits that must fail quick.
const short = 50 * time.Millisecond

// fatalTB stands in for the test a wait fails: it keeps the message and
// ends its goroutine as t.Fatal does, so that the wait returns no further.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs wait on a test of its own and returns the message that
// test failed with, "" if it passed.
func failure(t *testing.T, wait func(testing.TB)) string {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(f)
	}()
	<-done
	return f.msg
}

func status(id protocol.TaskID, state protocol.TaskState, uuid protocol.StatusUUID) protocol.TaskStatus {
	return protocol.TaskStatus{TaskID: id, State: state, UUID: uuid}
}

func TestWaitState_FailsAtTheDeadlineWithWhatArrived(t *testing.T) {
	r := &sdktest.Recorder{Timeout: short}
	r.StatusUpdate(nil, protocol.TaskStatus{TaskID: "a", State: protocol.TaskRunning, Reason: "why"})
	r.StatusUpdate(nil, status("b", protocol.TaskFinished, "u1"))
	start := time.Now()
	msg := failure(t, func(tb testing.TB) { r.WaitState(tb, "a", protocol.TaskFinished) })
	if took := time.Since(start); took < short {
		t.Errorf("the wait failed after %v, before its %v timeout", took, short)
	}
	if want := "task a: got [RUNNING(why)], want FINISHED"; !strings.Contains(msg, want) {
		t.Errorf("failure message %q, want it to contain %q", msg, want)
	}
}

func TestWaitState_ReturnsTheFirstMatchOnceItArrives(t *testing.T) {
	r := &sdktest.Recorder{}
	go func() {
		r.StatusUpdate(nil, status("a", protocol.TaskStarting, "u1"))
		r.StatusUpdate(nil, status("a", protocol.TaskRunning, "u2"))
		r.StatusUpdate(nil, status("a", protocol.TaskRunning, ""))
	}()
	if got := r.WaitState(t, "a", protocol.TaskRunning); got.UUID != "u2" || got.At.IsZero() {
		t.Errorf("got %+v, want the first RUNNING (u2) with its arrival time", got)
	}
}

func TestWaitUpdate_SkipsStatusesWithoutUUID(t *testing.T) {
	r := &sdktest.Recorder{Timeout: short}
	r.StatusUpdate(nil, status("a", protocol.TaskRunning, ""))
	msg := failure(t, func(tb testing.TB) { r.WaitUpdate(tb, "a", protocol.TaskRunning) })
	if !strings.Contains(msg, "want RUNNING update") {
		t.Errorf("a reconciliation status passed for an update: failure %q", msg)
	}
	r.StatusUpdate(nil, status("a", protocol.TaskRunning, "u1"))
	if got := r.WaitUpdate(t, "a", protocol.TaskRunning); got.UUID != "u1" {
		t.Errorf("got %+v, want the update u1", got)
	}
}

func TestWaitStatusAfter_WaitsPastTheSkipped(t *testing.T) {
	r := &sdktest.Recorder{Timeout: short}
	r.StatusUpdate(nil, status("a", protocol.TaskStaging, "u1"))
	skip := len(r.Statuses("a"))
	if msg := failure(t, func(tb testing.TB) { r.WaitStatusAfter(tb, "a", skip) }); !strings.Contains(msg, "no status after the first 1") {
		t.Errorf("failure %q, want no status after the first 1", msg)
	}
	r.StatusUpdate(nil, status("a", protocol.TaskLost, ""))
	if got := r.WaitStatusAfter(t, "a", skip); got.State != protocol.TaskLost {
		t.Errorf("got %s, want the status after the skipped one (LOST)", got.State)
	}
}

func TestStatuses_InArrivalOrder(t *testing.T) {
	r := &sdktest.Recorder{}
	states := []protocol.TaskState{protocol.TaskStaging, protocol.TaskStarting, protocol.TaskRunning, protocol.TaskFinished}
	for i, s := range states {
		r.StatusUpdate(nil, status("a", s, protocol.StatusUUID(fmt.Sprint(i))))
		r.StatusUpdate(nil, status("b", s, ""))
	}
	sts := r.Statuses("a")
	var got []protocol.TaskState
	for i, st := range sts {
		got = append(got, st.State)
		if i > 0 && st.At.Before(sts[i-1].At) {
			t.Errorf("status %d arrived at %v, before the one received ahead of it (%v)", i, st.At, sts[i-1].At)
		}
	}
	if !slices.Equal(got, states) {
		t.Errorf("statuses of a %v, want %v", got, states)
	}
	if all := r.AllStatuses(); len(all) != 2*len(states) || all[0].TaskID != "a" || all[1].TaskID != "b" {
		t.Errorf("all statuses %+v, want a's and b's interleaved as they arrived", all)
	}
}

func TestHooks_RunAfterRecording(t *testing.T) {
	r := &sdktest.Recorder{}
	var sawID, sawOffers, sawStatus bool
	r.OnRegistered = func(*framework.Driver) { sawID = slices.Equal(r.RegisteredIDs(), []protocol.FrameworkID{"fw"}) }
	r.OnOffers = func(_ *framework.Driver, offers []protocol.Offer) {
		got := r.OffersSince(r.OfferCount() - len(offers))
		sawOffers = len(got) == len(offers) && got[0].ID == offers[0].ID && got[len(got)-1].ID == offers[len(offers)-1].ID
	}
	r.OnStatus = func(_ *framework.Driver, st protocol.TaskStatus) {
		got := r.Statuses(st.TaskID)
		sawStatus = len(got) == 1 && got[0].TaskStatus == st
	}
	r.Registered(nil, "fw")
	r.Offers(nil, []protocol.Offer{{ID: "o1"}, {ID: "o2"}})
	r.StatusUpdate(nil, status("a", protocol.TaskRunning, "u1"))
	if !sawID || !sawOffers || !sawStatus {
		t.Errorf("hooks saw their event recorded: registered %v, offers %v, status %v; want all", sawID, sawOffers, sawStatus)
	}
}

func TestWaitOffer_OnlyOffersTheDriverHolds(t *testing.T) {
	r := &sdktest.Recorder{Timeout: short}
	d, err := framework.NewDriver(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Offers(d, []protocol.Offer{{ID: "o1"}})
	msg := failure(t, func(tb testing.TB) { r.WaitOffer(tb, d, 0, nil) })
	if !strings.Contains(msg, "no matching offer held among the 1 received after the first 0") {
		t.Errorf("an offer the driver does not hold was returned: failure %q", msg)
	}
}

func TestCallbacks_AreCounted(t *testing.T) {
	r := &sdktest.Recorder{}
	r.Disconnected(nil)
	r.Reregistered(nil)
	r.Reregistered(nil)
	r.OfferRescinded(nil, "o1")
	r.Error(nil, framework.ErrAmbiguous)
	if r.Disconnects() != 1 || r.Reregistrations() != 2 || !slices.Equal(r.Rescinds(), []protocol.OfferID{"o1"}) ||
		!slices.Equal(r.Errors(), []error{framework.ErrAmbiguous}) {
		t.Errorf("disconnects %d, reregistrations %d, rescinds %v, errors %v; want 1, 2, [o1], [%v]",
			r.Disconnects(), r.Reregistrations(), r.Rescinds(), r.Errors(), framework.ErrAmbiguous)
	}
}

func TestCountUpdates_DistinctAndDeliveries(t *testing.T) {
	sts := []sdktest.Arrival{
		{TaskStatus: status("a", protocol.TaskFinished, "u1")},
		{TaskStatus: status("a", protocol.TaskFinished, "u1")},
		{TaskStatus: status("a", protocol.TaskFinished, "")},
		{TaskStatus: status("a", protocol.TaskRunning, "u0")},
	}
	if distinct, deliveries := sdktest.CountUpdates(sts, protocol.TaskFinished); distinct != 1 || deliveries != 2 {
		t.Errorf("FINISHED: %d distinct, %d deliveries; want 1 and 2 (the status without UUID is none)", distinct, deliveries)
	}
	if got, want := sdktest.DescribeStatuses(sts), "[FINISHED FINISHED FINISHED RUNNING]"; got != want {
		t.Errorf("described as %s, want %s", got, want)
	}
}
