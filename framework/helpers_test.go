package framework_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/sdktest"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// wait bounds every wait in these tests.
const wait = 10 * time.Second

// newRecorder bounds the recorder's waits like every other wait here.
func newRecorder() *sdktest.Recorder { return &sdktest.Recorder{Timeout: wait} }

func states(sts []sdktest.Arrival) []protocol.TaskState {
	out := make([]protocol.TaskState, len(sts))
	for i, st := range sts {
		out[i] = st.State
	}
	return out
}

// running is a driver running in the background.
type running struct {
	d    *framework.Driver
	stop context.CancelFunc
	done chan struct{}
	err  error
}

// wait waits for Run to return and gives its error.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(wait):
		t.Fatal("Run did not return")
		return nil
	}
}

// start builds a driver connected to the cluster, runs it until the test
// ends (or stop), and waits until it subscribed unless noWait.
func start(t *testing.T, c *testcluster.Cluster, sched framework.Scheduler, opts ...framework.Option) *running {
	t.Helper()
	r := startNoWait(t, c, sched, opts...)
	select {
	case <-r.d.Ready():
	case <-r.done:
		t.Fatalf("Run returned before subscribing: %v", r.err)
	case <-time.After(wait):
		t.Fatal("driver not subscribed in time")
	}
	return r
}

// prepare builds a driver connected to the cluster without running it.
func prepare(t *testing.T, c *testcluster.Cluster, sched framework.Scheduler, opts ...framework.Option) *framework.Driver {
	t.Helper()
	all := append([]framework.Option{
		framework.WithNATSURLs(c.NATSURL()),
		framework.WithLogger(testlog.New(t)),
		framework.WithRequestTimeout(time.Second),
	}, opts...)
	d, err := framework.NewDriver(sched, all...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func startNoWait(t *testing.T, c *testcluster.Cluster, sched framework.Scheduler, opts ...framework.Option) *running {
	t.Helper()
	return run(t, prepare(t, c, sched, opts...))
}

// run runs d until the test ends (or stop).
func run(t *testing.T, d *framework.Driver) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// unit is the resources of most test tasks: 1 CPU, 64 MiB.
func unit() protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 64})
}

// task builds a test task with a behaviour.
func task(id string, res protocol.Resources, b testcluster.Behaviour) protocol.TaskInfo {
	tb := framework.NewTask(protocol.TaskID(id), "true").Resources(res)
	for k, v := range b.Labels() {
		tb.Label(k, v)
	}
	return tb.Build()
}

// ctxT returns a context bounded by wait.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// never fails the test if cond holds at any poll within d.
func never(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	err := testutil.Poll(d, 10*time.Millisecond, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
	if err == nil {
		t.Fatalf("%s", what)
	}
}
