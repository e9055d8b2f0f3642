package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/simagent"
	"github.com/allot-project/allot/protocol"
)

// busy is a framework that keeps want tasks running: it declares the
// tasks it misses as demand (so the master offers it task units, not
// every agent's remainder), launches on every offer what fits and is still
// missing, each task a simulated one that finishes after about the task
// duration, and kills one task in every killEvery once it runs (so agents
// follow kill commands too). It declines what it does not need for a
// while.
type busy struct {
	framework.NopScheduler
	name      string
	rec       *recorder
	task      protocol.Resources
	want      int
	duration  time.Duration
	killEvery int
	ctx       context.Context
	slots     chan struct{} // bounds the launches in flight

	mu      sync.Mutex
	stopped bool
	seq     int
	live    map[protocol.TaskID]*liveTask
	// unsure are the tasks of launches whose call failed: the master may
	// have committed one and lost the answer (a leader killed meanwhile),
	// in which case its updates come all the same.
	unsure   map[protocol.TaskID]*liveTask
	done     map[protocol.TaskID]protocol.TaskState // how each ended
	rng      *rand.Rand
	inflight sync.WaitGroup
}

type liveTask struct {
	offerAt time.Time
	// calledAt is when the launch call started (zero until then).
	calledAt time.Time
	agent    protocol.AgentID
	started  bool
	kill     bool
	// heard: its launch command was heard on the wire (watchLaunches).
	heard bool
	// counted: the task is counted launched, by its call's success or by
	// an update of it (which may come first: a short task can run and end
	// while its call waits out a leader that died with the answer).
	counted bool
}

func newBusy(ctx context.Context, name string, rec *recorder, want int, duration time.Duration, seed uint64) *busy {
	return &busy{name: name, rec: rec, want: want, duration: duration, killEvery: 20, ctx: ctx,
		task:  protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 1024}),
		slots: make(chan struct{}, 32), live: map[protocol.TaskID]*liveTask{}, unsure: map[protocol.TaskID]*liveTask{},
		done: map[protocol.TaskID]protocol.TaskState{}, rng: rand.New(rand.NewPCG(seed, 1))}
}

// declineRefuse is how long a busy framework refuses the agents it
// declined: the master's default refusal. A task that ends on an agent
// lifts it there (a filter refuses what was declined, not the agent), so
// the tasks that end meanwhile are replaced at once.
const declineRefuse = 5 * time.Second

// Offers launches on each offer as many tasks as fit and are missing, and
// declines the rest in one call, refusing those agents for declineRefuse.
func (b *busy) Offers(d *framework.Driver, offers []protocol.Offer) {
	now := time.Now()
	if len(offers) > 0 {
		b.rec.offers(now, offerPrefix(offers[0].ID))
	}
	var unused []protocol.OfferID
	for _, o := range offers {
		infos := b.plan(o, now)
		if len(infos) == 0 {
			unused = append(unused, o.ID)
			continue
		}
		b.inflight.Add(1)
		go b.launch(d, o.ID, infos)
	}
	if len(unused) > 0 {
		// One call for the lot, as a scheduler declines what an event
		// brought that it has no use for.
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			_ = d.Decline(b.ctx, unused, declineRefuse)
		}()
	}
}

// plan picks the tasks to launch on o and records them as live.
func (b *busy) plan(o protocol.Offer, now time.Time) []protocol.TaskInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil
	}
	free := o.Resources.Clone()
	var infos []protocol.TaskInfo
	for len(b.live) < b.want && free.Contains(b.task) {
		free.SubInPlace(b.task)
		b.seq++
		id := protocol.TaskID(fmt.Sprintf("%s-%d", b.name, b.seq))
		// Durations spread over ±50% so that tasks do not end in waves.
		after := time.Duration(float64(b.duration) * (0.5 + b.rng.Float64()))
		infos = append(infos, protocol.TaskInfo{TaskID: id, Name: "sim", AgentID: o.AgentID, Resources: b.task,
			Command: protocol.CommandInfo{Value: "true"}, Labels: simagent.Finish(after).Labels()})
		b.live[id] = &liveTask{offerAt: now, agent: o.AgentID, kill: b.seq%b.killEvery == 0}
	}
	return infos
}

func (b *busy) launch(d *framework.Driver, offer protocol.OfferID, infos []protocol.TaskInfo) {
	defer b.inflight.Done()
	select {
	case b.slots <- struct{}{}:
	case <-b.ctx.Done():
		return
	}
	called := time.Now()
	b.mu.Lock()
	for _, t := range infos {
		if lt, ok := b.live[t.TaskID]; ok {
			lt.calledAt = called
		}
	}
	b.mu.Unlock()
	err := d.Launch(b.ctx, []protocol.OfferID{offer}, infos...)
	<-b.slots
	if err == nil {
		b.rec.accepted(called, time.Now())
		b.launched(infos)
		return
	}
	b.rec.launchFailed()
	b.mu.Lock()
	for _, t := range infos {
		if lt, ok := b.live[t.TaskID]; ok {
			b.unsure[t.TaskID] = lt
			delete(b.live, t.TaskID)
		}
	}
	b.mu.Unlock()
}

// launched counts the tasks of a successful launch call, those not
// counted already by an update that came first.
func (b *busy) launched(infos []protocol.TaskInfo) {
	b.mu.Lock()
	n := 0
	for _, t := range infos {
		// A task no longer live has had its updates, and was counted at
		// the first.
		if lt, ok := b.live[t.TaskID]; ok && !lt.counted {
			lt.counted = true
			n++
		}
	}
	b.mu.Unlock()
	b.rec.launchedTasks(n)
}

// StatusUpdate records latencies and ends, and kills the tasks chosen for
// a kill once they run.
func (b *busy) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	now := time.Now()
	created := time.Unix(0, st.Timestamp)
	if st.Reason != protocol.ReasonReconciliation {
		// A reconciliation answers with the latest status as it was made.
		b.rec.update(created, now)
	}
	b.mu.Lock()
	if neverLaunched(st) {
		// The master refused the launch (its offer was gone: a leader
		// changed) or never took it: nothing was lost.
		delete(b.live, st.TaskID)
		delete(b.unsure, st.TaskID)
		b.mu.Unlock()
		return
	}
	t, ok := b.live[st.TaskID]
	if u, was := b.unsure[st.TaskID]; !ok && was {
		delete(b.unsure, st.TaskID)
		// Its launch happened after all.
		t, ok = u, true
		b.live[st.TaskID] = t
	}
	if !ok {
		first, ended := b.done[st.TaskID]
		b.mu.Unlock()
		if st.State.Terminal() && ended {
			b.rec.endedAgain(st.State != first)
		}
		return
	}
	if !t.counted {
		t.counted = true
		b.rec.launchedTasks(1)
	}
	first := !t.started
	t.started = true
	offerAt, calledAt := t.offerAt, t.calledAt
	kill := t.kill && st.State == protocol.TaskRunning
	t.kill = t.kill && !kill
	if st.State.Terminal() {
		delete(b.live, st.TaskID)
		b.done[st.TaskID] = st.State
	}
	b.mu.Unlock()
	if first {
		b.rec.started(offerAt, calledAt, created)
	}
	if st.State.Terminal() {
		b.rec.ended1(st)
	}
	if kill {
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			_ = d.Kill(b.ctx, st.TaskID, t.agent, 0)
		}()
	}
}

// neverLaunched reports the statuses that say a launch did not happen:
// refused for its offers, or unknown to the master when reconciled.
func neverLaunched(st protocol.TaskStatus) bool {
	return (st.State == protocol.TaskLost || st.State == protocol.TaskDropped) &&
		(st.Reason == protocol.ReasonInvalidOffers || st.Reason == protocol.ReasonTaskUnknown)
}

// demander declares a framework's demand (framework.Driver does).
type demander interface {
	Demand(ctx context.Context, shapes ...protocol.TaskShape) error
}

// declare keeps the framework's declared demand at the tasks it misses,
// checking every interval, until ctx ends.
func (b *busy) declare(ctx context.Context, d demander, every time.Duration) {
	declared := int64(-1)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		b.mu.Lock()
		missing := int64(0)
		if !b.stopped {
			missing = int64(max(0, b.want-len(b.live)))
		}
		b.mu.Unlock()
		// A count of zero, not an empty declaration: a framework that
		// declares nothing is offered every agent's remainder, as one that
		// never declared (the whole idle cluster, declined at once).
		if missing != declared {
			if err := d.Demand(ctx, protocol.TaskShape{Resources: b.task, Count: missing}); err == nil {
				declared = missing
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// stop stops launching; running reports the tasks not yet ended.
func (b *busy) stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
}

func (b *busy) running() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.live)
}

// heardFirst is when the offer a task was launched on arrived, the first
// time its launch command is heard for a task not yet ended: a launch the
// master sends again (its agent reported nothing of it) is the same
// launch, not another.
func (b *busy) heardFirst(id protocol.TaskID) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.live[id]
	if !ok {
		t, ok = b.unsure[id]
	}
	if !ok || t.heard {
		return time.Time{}, false
	}
	t.heard = true
	return t.offerAt, true
}

// unended lists the live tasks, those an agent reported on first, for a
// look into the logs after a run.
func (b *busy) unended() (started, staging []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, t := range b.live {
		desc := fmt.Sprintf("%s on %s", id, t.agent)
		if t.started {
			started = append(started, desc)
		} else {
			staging = append(staging, desc)
		}
	}
	return started, staging
}

// started counts the live tasks an agent has reported on: launched, not
// merely planned.
func (b *busy) started() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, t := range b.live {
		if t.started {
			n++
		}
	}
	return n
}
