package dag

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// fakeDriver records the scheduler's calls. launchErr, when set, is what
// the next Launch returns.
type fakeDriver struct {
	mu         sync.Mutex
	launches   []launchCall
	declined   [][]protocol.OfferID
	demands    []protocol.DemandRequest
	suppressed bool
	suppresses int
	revives    int
	killed     []protocol.TaskID
	launchErr  error
}

type launchCall struct {
	offers []protocol.OfferID
	tasks  []protocol.TaskInfo
}

var _ driver = (*fakeDriver)(nil)

func (f *fakeDriver) Launch(_ context.Context, ids []protocol.OfferID, tasks ...protocol.TaskInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.launchErr; err != nil {
		f.launchErr = nil
		return err
	}
	f.launches = append(f.launches, launchCall{offers: slices.Clone(ids), tasks: slices.Clone(tasks)})
	return nil
}

func (f *fakeDriver) DeclineLeftover(_ context.Context, ids []protocol.OfferID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.declined = append(f.declined, slices.Clone(ids))
	return nil
}

func (f *fakeDriver) DeclareDemand(_ context.Context, r protocol.DemandRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.demands = append(f.demands, r)
	return nil
}

func (f *fakeDriver) Suppress(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.suppressed = true
	f.suppresses++
	return nil
}

func (f *fakeDriver) Revive(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.suppressed = false
	f.revives++
	return nil
}

func (f *fakeDriver) Kill(_ context.Context, id protocol.TaskID, _ protocol.AgentID, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killed = append(f.killed, id)
	return nil
}

// lastDemand returns the latest declaration.
func (f *fakeDriver) lastDemand(t *testing.T) protocol.DemandRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.demands) == 0 {
		t.Fatal("no demand declared")
	}
	return f.demands[len(f.demands)-1]
}

// launched returns every task launched so far, in order.
func (f *fakeDriver) launched() []protocol.TaskInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []protocol.TaskInfo
	for _, l := range f.launches {
		out = append(out, l.tasks...)
	}
	return out
}

// fakeClock is a Clock whose time moves only on Advance, which runs the
// timers that fall due on the calling goroutine.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// pending returns when the earliest live timer fires, or the zero time.
func (c *fakeClock) pending() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at time.Time
	for _, t := range c.timers {
		if !t.stopped && (at.IsZero() || t.at.Before(at)) {
			at = t.at
		}
	}
	return at
}

// Advance moves time forward by d and fires the timers due by then, in
// order.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.stopped && !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		next.stopped = true
		c.now = next.at
		c.mu.Unlock()
		next.f()
	}
}

// cpus is a demand or share of n milli-CPUs.
func cpus(n int64) protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: n})
}

// mapReduce is altruism's example job: three one-core map tasks of a
// minute feed a one-core reduce.
func mapReduce(id string) Job {
	return Job{
		ID: id,
		Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
			{Name: "map", Tasks: 3, Demand: cpus(1000), Duration: time.Minute},
			{Name: "reduce", Tasks: 1, Demand: cpus(1000), Duration: time.Minute, Parents: []string{"map"}},
		}, FixedEstimates: true},
		Task: func(r TaskRef) protocol.TaskInfo {
			return protocol.TaskInfo{Command: protocol.CommandInfo{Shell: true, Value: "run " + r.Stage + " on " + string(r.Agent)}}
		},
	}
}

// harness is a scheduler on a fake driver and a fake clock, registered.
type harness struct {
	s   *Scheduler
	d   *fakeDriver
	clk *fakeClock
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	clk := newFakeClock()
	all := append([]Option{WithClock(clk), WithLogger(testlog.New(t))}, opts...)
	s, err := New(all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	h := &harness{s: s, d: &fakeDriver{}, clk: clk}
	s.registered(h.d)
	return h
}

func (h *harness) submit(t *testing.T, j Job) {
	t.Helper()
	if err := h.s.Submit(context.Background(), j); err != nil {
		t.Fatal(err)
	}
}

func (h *harness) share(n int64) {
	h.s.shareUpdate(h.d, protocol.ShareUpdateEvent{FairShare: map[string]int64{protocol.ResCPUs: n}})
}

func (h *harness) offer(id string, kind protocol.OfferKind, res protocol.Resources) {
	h.s.offers(h.d, []protocol.Offer{{ID: protocol.OfferID(id), AgentID: "agent-1", Resources: res, Kind: kind}})
}

func (h *harness) end(id protocol.TaskID, st protocol.TaskState) {
	h.s.status(h.d, protocol.TaskStatus{TaskID: id, State: st})
}

// counts returns the task counts of each list of a declaration.
func counts(r protocol.DemandRequest) (demand, must, optional int64) {
	return countShapes(r.Demand), countShapes(r.MustStart), countShapes(r.Optional)
}
