package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// faultFramework runs a batch of logical tasks to the end through faults,
// as a framework ported from Mesos would: it launches each again, under a
// new attempt ID, only when an attempt ends LOST, DROPPED or ERROR, or when
// the leader never took the launch. It records everything the fault run
// checks: finishes per logical task, attempts accepted and their ends, and
// the first offer after each moment of interest.
type faultFramework struct {
	framework.NopScheduler
	mu       sync.Mutex
	shape    protocol.Resources
	script   func(logical string) string
	pending  []string
	attempt  map[string]int
	live     map[protocol.TaskID]string // attempt → logical, while it may run
	accepted map[protocol.TaskID]bool   // attempts the leader took
	ended    map[protocol.TaskID]protocol.TaskState
	finished map[string]int
	bad      []protocol.TaskStatus // FAILED or KILLED: never expected
	relaunch map[protocol.TaskState]int
	offers   []time.Time
	left     int
	done     chan struct{}
}

func newFaultFramework(n int, shape protocol.Resources, script func(string) string) *faultFramework {
	f := &faultFramework{shape: shape, script: script, attempt: map[string]int{}, live: map[protocol.TaskID]string{},
		accepted: map[protocol.TaskID]bool{}, ended: map[protocol.TaskID]protocol.TaskState{}, finished: map[string]int{},
		relaunch: map[protocol.TaskState]int{}, left: n, done: make(chan struct{})}
	for i := range n {
		f.pending = append(f.pending, fmt.Sprintf("t%04d", i))
	}
	return f
}

func (f *faultFramework) Registered(d *framework.Driver, _ protocol.FrameworkID) { f.declare(d) }
func (f *faultFramework) Reregistered(d *framework.Driver)                       { f.declare(d) }

// declare tells the leader how many tasks wait.
func (f *faultFramework) declare(d *framework.Driver) {
	f.mu.Lock()
	n := int64(len(f.pending))
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.Demand(ctx, protocol.TaskShape{Resources: f.shape, Count: max(n, 1)})
}

func (f *faultFramework) Offers(d *framework.Driver, offers []protocol.Offer) {
	f.mu.Lock()
	f.offers = append(f.offers, time.Now())
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, o := range offers {
		f.mu.Lock()
		n := min(int(placement.HowMany(o.Resources, protocol.TaskShape{Resources: f.shape, Count: 1})), len(f.pending))
		var tasks []protocol.TaskInfo
		for _, logical := range f.pending[:n] {
			f.attempt[logical]++
			id := protocol.TaskID(fmt.Sprintf("%s.a%d", logical, f.attempt[logical]))
			f.live[id] = logical
			tasks = append(tasks, framework.NewTask(id, f.script(logical)).Shell().Resources(f.shape).Build())
		}
		f.pending = f.pending[n:]
		f.mu.Unlock()
		if n == 0 {
			_ = d.Decline(ctx, []protocol.OfferID{o.ID}, framework.NoFilter)
			continue
		}
		err := d.Launch(ctx, []protocol.OfferID{o.ID}, tasks...)
		f.mu.Lock()
		switch {
		case err == nil:
			for _, t := range tasks {
				f.accepted[t.TaskID] = true
			}
		case errors.Is(err, framework.ErrAmbiguous):
			// The driver reconciles: a status settles each task.
		default:
			// Refused or never received: nothing launched. Statuses
			// the leader sends for a refusal are ignored (not live).
			for _, t := range tasks {
				f.pending = append(f.pending, f.live[t.TaskID])
				delete(f.live, t.TaskID)
			}
		}
		f.mu.Unlock()
	}
}

func (f *faultFramework) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st.State == protocol.TaskRunning || st.State == protocol.TaskStarting {
		f.accepted[st.TaskID] = true
	}
	if !st.State.Terminal() {
		return
	}
	logical, live := f.live[st.TaskID]
	if !live {
		return
	}
	delete(f.live, st.TaskID)
	unknown := st.State == protocol.TaskLost && (st.Reason == protocol.ReasonTaskUnknown || st.Reason == protocol.ReasonReconciliation)
	if !unknown {
		f.accepted[st.TaskID] = true
		f.ended[st.TaskID] = st.State
	}
	switch st.State {
	case protocol.TaskFinished:
		f.finished[logical]++
		if f.left--; f.left == 0 {
			close(f.done)
		}
	case protocol.TaskLost, protocol.TaskDropped, protocol.TaskError:
		f.relaunch[st.State]++
		f.pending = append(f.pending, logical)
	default:
		f.bad = append(f.bad, st)
	}
}
