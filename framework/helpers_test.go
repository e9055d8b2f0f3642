package framework_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// wait bounds every wait in these tests.
const wait = 10 * time.Second

// recorder is a Scheduler that records every callback. Hooks, when set,
// run after the recording, on the driver's callback goroutine.
type recorder struct {
	mu           sync.Mutex
	registered   []protocol.FrameworkID
	reregistered int
	disconnected int
	offers       []protocol.Offer
	rescinded    []protocol.OfferID
	statuses     []protocol.TaskStatus
	errs         []error

	onRegistered func(d *framework.Driver)
	onOffers     func(d *framework.Driver, offers []protocol.Offer)
	onStatus     func(d *framework.Driver, st protocol.TaskStatus)
}

var _ framework.Scheduler = (*recorder)(nil)

func (r *recorder) Registered(d *framework.Driver, id protocol.FrameworkID) {
	r.mu.Lock()
	r.registered = append(r.registered, id)
	r.mu.Unlock()
	if r.onRegistered != nil {
		r.onRegistered(d)
	}
}

func (r *recorder) Reregistered(*framework.Driver) {
	r.mu.Lock()
	r.reregistered++
	r.mu.Unlock()
}

func (r *recorder) Disconnected(*framework.Driver) {
	r.mu.Lock()
	r.disconnected++
	r.mu.Unlock()
}

func (r *recorder) Offers(d *framework.Driver, offers []protocol.Offer) {
	r.mu.Lock()
	r.offers = append(r.offers, offers...)
	r.mu.Unlock()
	if r.onOffers != nil {
		r.onOffers(d, offers)
	}
}

func (r *recorder) OfferRescinded(_ *framework.Driver, id protocol.OfferID) {
	r.mu.Lock()
	r.rescinded = append(r.rescinded, id)
	r.mu.Unlock()
}

func (r *recorder) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	r.mu.Lock()
	r.statuses = append(r.statuses, st)
	r.mu.Unlock()
	if r.onStatus != nil {
		r.onStatus(d, st)
	}
}

func (r *recorder) ShareUpdate(*framework.Driver, protocol.ShareUpdateEvent) {}

func (r *recorder) Error(_ *framework.Driver, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *recorder) offerCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.offers)
}

func (r *recorder) offersSince(n int) []protocol.Offer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.offers[n:])
}

func (r *recorder) registeredIDs() []protocol.FrameworkID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.registered)
}

func (r *recorder) disconnects() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.disconnected
}

func (r *recorder) reregistrations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reregistered
}

func (r *recorder) errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

func (r *recorder) rescinds() []protocol.OfferID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rescinded)
}

// statusesOf returns the statuses received for a task, in order.
func (r *recorder) statusesOf(id protocol.TaskID) []protocol.TaskStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []protocol.TaskStatus
	for _, st := range r.statuses {
		if st.TaskID == id {
			out = append(out, st)
		}
	}
	return out
}

// waitStatus waits for a status of task id that satisfies match and
// returns it.
func (r *recorder) waitStatus(t *testing.T, id protocol.TaskID, match func(protocol.TaskStatus) bool) protocol.TaskStatus {
	t.Helper()
	var found protocol.TaskStatus
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		for _, st := range r.statusesOf(id) {
			if match(st) {
				found = st
				return nil
			}
		}
		return fmt.Errorf("task %s: statuses %v", id, states(r.statusesOf(id)))
	})
	return found
}

// waitState waits for task id to reach state.
func (r *recorder) waitState(t *testing.T, id protocol.TaskID, state protocol.TaskState) protocol.TaskStatus {
	t.Helper()
	return r.waitStatus(t, id, func(st protocol.TaskStatus) bool { return st.State == state })
}

// waitOffers waits for an offer received after the first n that satisfies
// match, and returns it.
func (r *recorder) waitOffer(t *testing.T, d *framework.Driver, n int, match func(protocol.Offer) bool) protocol.Offer {
	t.Helper()
	var found protocol.Offer
	testutil.WaitFor(t, wait, 5*time.Millisecond, func() error {
		held := map[protocol.OfferID]bool{}
		for _, o := range d.Offers() {
			held[o.ID] = true
		}
		for _, o := range r.offersSince(n) {
			if held[o.ID] && (match == nil || match(o)) {
				found = o
				return nil
			}
		}
		return errors.New("no matching offer held")
	})
	return found
}

func states(sts []protocol.TaskStatus) []protocol.TaskState {
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
