package integration

// Helpers of the TestAgent_* tests (sdk_helpers_test.go): an SDK framework
// (framework.Driver) that launches tasks on chosen agents.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// sdkFramework is a framework.Driver running in the background.
type sdkFramework struct {
	d      *framework.Driver
	rec    *sdktest.Recorder
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// newDriver builds a driver for rec connected to the cluster.
func newDriver(t *testing.T, c *testcluster.Cluster, rec *sdktest.Recorder, opts ...framework.Option) *framework.Driver {
	t.Helper()
	d, err := framework.NewDriver(rec, append(driverOptions(t, c), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// driverOptions connect a driver to the cluster.
func driverOptions(t *testing.T, c *testcluster.Cluster) []framework.Option {
	all := []framework.Option{
		framework.WithNATSURLs(c.NATSURL()),
		framework.WithLogger(testlog.New(t)),
		framework.WithRequestTimeout(time.Second),
	}
	if files, ok := c.TLSFiles(); ok {
		all = append(all, framework.WithNATSTLS(files.CA, files.Cert, files.Key))
	}
	return all
}

// runDriver runs d until the test ends (or stop) and waits until it has
// subscribed.
func runDriver(t *testing.T, d *framework.Driver, rec *sdktest.Recorder) *sdkFramework {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &sdkFramework{d: d, rec: rec, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.err = d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-f.done
	})
	select {
	case <-d.Ready():
	case <-f.done:
		t.Fatalf("Run returned before subscribing: %v", f.err)
	case <-time.After(sdkWait):
		t.Fatal("driver not subscribed in time")
	}
	return f
}

// startSDK builds and runs an SDK framework recording into a new
// recorder. It declares no demand, so it is offered whole agents, and
// it holds every offer it does not launch on: frameworks that share an
// agent declare their demand instead (see TestAgent_FrameworkFailover).
func startSDK(t *testing.T, c *testcluster.Cluster, opts ...framework.Option) *sdkFramework {
	t.Helper()
	rec := newRecorder()
	return runDriver(t, newDriver(t, c, rec, opts...), rec)
}

// stop cancels Run and returns what it returned.
func (f *sdkFramework) stop(t *testing.T) error {
	t.Helper()
	f.cancel()
	select {
	case <-f.done:
		return f.err
	case <-time.After(sdkWait):
		t.Fatal("Run did not return after cancel")
		return nil
	}
}

// sdkCtx returns a context bounded by sdkWait.
func sdkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	t.Cleanup(cancel)
	return ctx
}

// offerOn waits until the driver holds an offer of agent id with room for
// need, and returns it.
func (f *sdkFramework) offerOn(t *testing.T, id protocol.AgentID, need protocol.Resources) protocol.Offer {
	t.Helper()
	var offer protocol.Offer
	testutil.WaitFor(t, sdkWait, 5*time.Millisecond, func() error {
		for _, o := range f.d.Offers() {
			if o.AgentID == id && o.Resources.Contains(need) {
				offer = o
				return nil
			}
		}
		return fmt.Errorf("no offer of agent %s holds %s (held: %v)", id, need, f.d.Offers())
	})
	return offer
}

// launch launches tasks on an offer of agent id, on a fresh one when the
// offer went stale meanwhile (rescinded by a leader change, say).
func (f *sdkFramework) launch(t *testing.T, id protocol.AgentID, tasks ...protocol.TaskInfo) {
	t.Helper()
	f.launchWith(t, id, tasks, func(o protocol.Offer) error {
		return f.d.Launch(sdkCtx(t), []protocol.OfferID{o.ID}, tasks...)
	})
}

// launchGroup is launch with LaunchGroup.
func (f *sdkFramework) launchGroup(t *testing.T, id protocol.AgentID, group string, tasks ...protocol.TaskInfo) {
	t.Helper()
	f.launchWith(t, id, tasks, func(o protocol.Offer) error {
		return f.d.LaunchGroup(sdkCtx(t), []protocol.OfferID{o.ID}, group, tasks...)
	})
}

func (f *sdkFramework) launchWith(t *testing.T, id protocol.AgentID, tasks []protocol.TaskInfo, accept func(protocol.Offer) error) {
	t.Helper()
	var need protocol.Resources
	for _, ti := range tasks {
		need.AddInPlace(ti.Resources)
	}
	for range 10 {
		before := len(f.rec.Statuses(tasks[0].TaskID))
		err := accept(f.offerOn(t, id, need))
		// A stale offer, or none leading to take the accept (nobody
		// received it): try a fresh offer.
		if errors.Is(err, protocol.ErrUnknownOffer) || errors.Is(err, protocol.ErrOfferRescinded) ||
			errors.Is(err, nats.ErrNoResponders) || errors.Is(err, protocol.ErrNotLeader) {
			continue
		}
		if errors.Is(err, framework.ErrAmbiguous) {
			// The leader changed while committing: the driver reconciles,
			// and a launch that never committed comes back LOST
			// (task_unknown); the tasks of one accept commit together.
			st := f.rec.WaitStatusAfter(t, tasks[0].TaskID, before)
			if st.State == protocol.TaskLost && st.Reason == protocol.ReasonTaskUnknown {
				continue
			}
			return
		}
		if err != nil {
			t.Fatalf("launch: %v", err)
		}
		return
	}
	t.Fatal("launch: every offer tried was stale")
}

// shTask is a task that runs script with /bin/sh on 100 milli-CPUs and 32 MiB.
func shTask(id, script string) protocol.TaskInfo {
	return framework.NewTask(protocol.TaskID(id), script).Shell().CPUs(100).Mem(32).Build()
}

// waitForGo is a task script that records its shell's pid in the file
// "pid" and waits until the file "go" appears in its sandbox.
const waitForGo = `echo $$ > pid; while [ ! -e go ]; do sleep 0.02; done; echo done`
