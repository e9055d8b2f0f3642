package integration

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
)

// carbyneWait bounds the whole end-to-end run.
const carbyneWait = 40 * time.Second

// carbyneTask is the demand of every task of the test: a quarter of an
// agent's CPUs.
func carbyneTask() protocol.Resources {
	return protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 32})
}

// carbyneJob is a DAG with room for altruism: one long task and three
// short ones in parallel, joined by a one-task stage. Packed into a share
// of two tasks or more, only the long task must start at once; the short
// ones may wait about a second, or run early on leftover.
func carbyneJob(id string, long time.Duration, kinds *kindLog) dag.Job {
	sleeps := map[string]time.Duration{"long": long, "short": 200 * time.Millisecond, "join": 100 * time.Millisecond}
	return dag.Job{
		ID: id,
		Spec: altruism.JobSpec{Stages: []altruism.StageSpec{
			{Name: "long", Tasks: 1, Demand: carbyneTask(), Duration: sleeps["long"]},
			{Name: "short", Tasks: 3, Demand: carbyneTask(), Duration: sleeps["short"]},
			{Name: "join", Tasks: 1, Demand: carbyneTask(), Duration: sleeps["join"], Parents: []string{"long", "short"}},
		}},
		Task: func(r dag.TaskRef) protocol.TaskInfo {
			kinds.set(r.TaskID(), r.Kind)
			secs := strconv.FormatFloat(sleeps[r.Stage].Seconds(), 'f', -1, 64)
			return framework.NewTask("", "sleep "+secs).Shell().Build()
		},
	}
}

// kindLog records task kinds by task ID: as the adapter launched them, or
// as the master stamped them.
type kindLog struct {
	mu    sync.Mutex
	kinds map[protocol.TaskID]protocol.OfferKind
}

func (k *kindLog) set(id protocol.TaskID, kind protocol.OfferKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kinds == nil {
		k.kinds = map[protocol.TaskID]protocol.OfferKind{}
	}
	k.kinds[id] = kind
}

func (k *kindLog) snapshot() map[protocol.TaskID]protocol.OfferKind {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[protocol.TaskID]protocol.OfferKind, len(k.kinds))
	for id, kind := range k.kinds {
		out[id] = kind
	}
	return out
}

// runScheduler runs a driver for sched until the test ends and waits
// until it has subscribed.
func runScheduler(t *testing.T, c *testcluster.Cluster, sched framework.Scheduler, name string) *framework.Driver {
	t.Helper()
	d, err := framework.NewDriver(sched, framework.WithNATSURLs(c.NATSURL()), framework.WithName(name),
		framework.WithLogger(testlog.New(t)), framework.WithRequestTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-d.Ready():
	case err := <-done:
		t.Fatalf("%s: Run returned before subscribing: %v", name, err)
	case <-time.After(sdkWait):
		t.Fatalf("%s: not subscribed in time", name)
	}
	return d
}

// greedyBatch is a plain SDK framework: it declares all its tasks as
// demand, launches them on any offer they fit, and neither plans nor
// declares optional work.
type greedyBatch struct {
	framework.NopScheduler
	mu      sync.Mutex
	todo    []protocol.TaskInfo
	left    int
	started time.Time
	ended   time.Time
	bad     []protocol.TaskStatus
	done    chan struct{}
}

func newGreedyBatch(n int, sleep string) *greedyBatch {
	g := &greedyBatch{left: n, done: make(chan struct{})}
	for i := range n {
		g.todo = append(g.todo, framework.NewTask(protocol.TaskID(fmt.Sprint("greedy-", i)), "sleep "+sleep).
			Shell().Resources(carbyneTask()).Build())
	}
	return g
}

// Registered declares every task as demand before offers open.
func (g *greedyBatch) Registered(d *framework.Driver, _ protocol.FrameworkID) {
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	g.mu.Lock()
	shape := placement.ShapeOf(g.todo[0], int64(len(g.todo)))
	g.started = time.Now()
	g.mu.Unlock()
	_ = d.Demand(ctx, shape)
}

func (g *greedyBatch) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx, cancel := context.WithTimeout(context.Background(), sdkWait)
	defer cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, o := range offers {
		n := 0
		if len(g.todo) > 0 {
			n = int(min(placement.HowMany(o.Resources, placement.ShapeOf(g.todo[0], 1)), int64(len(g.todo))))
		}
		if n == 0 {
			_ = d.Decline(ctx, []protocol.OfferID{o.ID}, 0)
			continue
		}
		if err := d.Launch(ctx, []protocol.OfferID{o.ID}, g.todo[:n]...); err != nil {
			continue // the resources come back in a later offer
		}
		g.todo = g.todo[n:]
	}
}

func (g *greedyBatch) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	if !st.State.Terminal() {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if st.State != protocol.TaskFinished {
		g.bad = append(g.bad, st)
	}
	if g.left--; g.left == 0 {
		g.ended = time.Now()
		close(g.done)
	}
}

// TestCarbyne_EndToEnd runs two altruistic DAG frameworks (framework/dag)
// and one greedy SDK framework together on three real agents, and checks
// that every job and task finishes, that the altruistic frameworks gave
// fair resources back as leftover and ran optional tasks on leftover
// offers (as the master stamped them), that the greedy framework ran on
// fair offers only, and reports each framework's job completion times.
func TestCarbyne_EndToEnd(t *testing.T) {
	t.Parallel()
	// A framework's first share goes out in the round after its first
	// demand report, before that round's offers: offers sized for the
	// greedy demand it declares before it knows its share then find it
	// altruistic, and it declines what it does not need as leftover.
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	leader := c.WaitForLeader()
	for i := range 3 {
		executors.New(t, c, executors.Options{
			Hostname:  fmt.Sprint("carbyne-", i),
			Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 2000, protocol.ResMem: 1024}),
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), carbyneWait)
	defer cancel()

	// The master's view of every task's kind, polled while the tasks live
	// (the master forgets a task once its end is acknowledged).
	stamped, watched, stopWatch := watchKinds(ctx, leader)
	defer stopWatch()

	alts := startAlts(t, ctx, c, watched)
	greedy := newGreedyBatch(6, "0.5")
	gd := runScheduler(t, c, greedy, "greedy")
	watched.Store(gd.ID(), "greedy")

	for _, f := range alts {
		for _, id := range f.jobs {
			res, err := f.s.Wait(ctx, id)
			if err != nil {
				t.Fatalf("%s: job %s: %v", f.name, id, err)
			}
			if res.JCT <= 0 || math.IsInf(res.JCT.Seconds(), 0) || res.JCT >= carbyneWait {
				t.Errorf("%s: job %s: JCT %v, want positive and finite", f.name, id, res.JCT)
			}
			t.Logf("%s: job %s: JCT %v, %d fair and %d leftover tasks, %d plans",
				f.name, id, res.JCT.Round(time.Millisecond), res.FairTasks, res.LeftoverTasks, res.Plans)
		}
	}
	select {
	case <-greedy.done:
	case <-ctx.Done():
		t.Fatalf("greedy framework: tasks left unfinished: %v", ctx.Err())
	}
	greedy.mu.Lock()
	if len(greedy.bad) > 0 {
		t.Errorf("greedy framework: tasks ended badly: %+v", greedy.bad)
	}
	gJCT := greedy.ended.Sub(greedy.started)
	unlaunched := len(greedy.todo)
	greedy.mu.Unlock()
	t.Logf("greedy: 6 tasks, JCT %v", gJCT.Round(time.Millisecond))

	checkAltLeftover(t, alts)

	// The master stamped the kinds the adapters launched with, and the
	// greedy framework ran on fair offers only.
	stopWatch()
	seen := stamped.snapshot()
	masterLeftover := 0
	for _, f := range alts {
		for id, kind := range f.launched.snapshot() {
			got, ok := seen[id]
			if !ok {
				continue // launched and ended between two polls
			}
			if got != kind {
				t.Errorf("%s: task %s: master stamped %s, adapter launched on %s", f.name, id, got, kind)
			}
			if got == protocol.OfferLeftover {
				masterLeftover++
			}
		}
	}
	if masterLeftover == 0 {
		t.Errorf("the master saw no altruistic task on a leftover offer")
	}
	if unlaunched > 0 {
		t.Errorf("greedy framework: %d tasks never launched", unlaunched)
	}
	for i := range 6 {
		if kind, ok := seen[protocol.TaskID(fmt.Sprint("greedy-", i))]; ok && kind != protocol.OfferFair {
			t.Errorf("greedy task %d ran on a %s offer, want fair", i, kind)
		}
	}
}

// watchKinds polls leader's view of the tasks of the frameworks stored in
// watched (ID → name) and records their kinds in stamped, until ctx ends
// or stop is called; stop returns once the polling has stopped.
func watchKinds(ctx context.Context, leader *master.Master) (stamped *kindLog, watched *sync.Map, stop func()) {
	stamped, watched = &kindLog{}, &sync.Map{}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			watched.Range(func(id, _ any) bool {
				for _, tk := range leader.View().TasksByFramework(id.(protocol.FrameworkID)) {
					stamped.set(tk.ID, tk.Kind)
				}
				return true
			})
			select {
			case <-watchCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return stamped, watched, func() {
		stopWatch()
		<-watchDone
	}
}

// carbyneAlt is one of TestCarbyne_EndToEnd's altruistic DAG frameworks.
type carbyneAlt struct {
	name     string
	s        *dag.Scheduler
	d        *framework.Driver
	jobs     []string
	launched kindLog
}

// startAlts starts the two altruistic frameworks, each with two jobs
// submitted, and stores them in watched.
func startAlts(t *testing.T, ctx context.Context, c *testcluster.Cluster, watched *sync.Map) []*carbyneAlt {
	t.Helper()
	alts := []*carbyneAlt{{name: "alt-a"}, {name: "alt-b"}}
	for i, f := range alts {
		s, err := dag.New(dag.WithLogger(testlog.New(t).Named(f.name)), dag.WithSeed(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		f.s = s
		f.d = runScheduler(t, c, s, f.name)
		watched.Store(f.d.ID(), f.name)
		for j, long := range []time.Duration{1500 * time.Millisecond, 1200 * time.Millisecond} {
			id := fmt.Sprintf("%s-job%d", f.name, j)
			if err := s.Submit(ctx, carbyneJob(id, long, &f.launched)); err != nil {
				t.Fatal(err)
			}
			f.jobs = append(f.jobs, id)
		}
	}
	return alts
}

// checkAltLeftover logs the altruistic frameworks' statistics and checks
// that, together, they got leftover offers, ran tasks on them and
// declined fair resources as leftover.
func checkAltLeftover(t *testing.T, alts []*carbyneAlt) {
	t.Helper()
	var leftoverOffers, leftoverTasks int
	var declined protocol.Resources
	for _, f := range alts {
		st := f.s.Stats()
		t.Logf("%s: %d fair and %d leftover offers, %d fair and %d leftover tasks, declined as leftover %s, %d share updates (last %s), %d plans, %d reports",
			f.name, st.FairOffers, st.LeftoverOffers, st.FairTasks, st.LeftoverTasks, st.DeclinedLeftover,
			st.ShareUpdates, st.Share, st.Plans, st.Declarations)
		leftoverOffers += st.LeftoverOffers
		leftoverTasks += st.LeftoverTasks
		declined.AddInPlace(st.DeclinedLeftover)
	}
	if leftoverOffers == 0 || leftoverTasks == 0 {
		t.Errorf("leftover offers %d, tasks on them %d: want some of each", leftoverOffers, leftoverTasks)
	}
	if declined.Scalar(protocol.ResCPUs) <= 0 {
		t.Errorf("fair resources declined as leftover: %s, want some", declined)
	}
}
