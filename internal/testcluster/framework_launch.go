package testcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/allot-project/allot/protocol"
)

// AcceptOutcome is what the framework knows of a launch it asked for.
type AcceptOutcome string

// Accept outcomes.
const (
	// AcceptOK: the leader committed the launch.
	AcceptOK AcceptOutcome = "ok"
	// AcceptRefused: the leader refused it; the task never runs.
	AcceptRefused AcceptOutcome = "refused"
	// AcceptUnknown: no answer (timeout, leader change); the launch may
	// have committed. A status update for the task settles it.
	AcceptUnknown AcceptOutcome = "unknown"
)

// Launch accepts one offer with tasks. A task's AgentID defaults to the
// offer's agent, and its Name to its ID. The error is the leader's; the
// task is recorded with the outcome either way.
func (f *TestFramework) Launch(offer protocol.Offer, tasks ...protocol.TaskInfo) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.RetryTimeout)
	defer cancel()
	return f.accept(ctx, []protocol.OfferID{offer.ID}, offer.AgentID, tasks)
}

func (f *TestFramework) accept(ctx context.Context, ids []protocol.OfferID, agent protocol.AgentID, tasks []protocol.TaskInfo) error {
	tasks = slices.Clone(tasks)
	f.mu.Lock()
	for i := range tasks {
		if tasks[i].AgentID == "" {
			tasks[i].AgentID = agent
		}
		if tasks[i].Name == "" {
			tasks[i].Name = string(tasks[i].TaskID)
		}
		if _, ok := f.tasks[tasks[i].TaskID]; !ok {
			f.order = append(f.order, tasks[i].TaskID)
			f.tasks[tasks[i].TaskID] = &fwTask{info: tasks[i], outcome: AcceptUnknown}
		}
	}
	for _, id := range ids {
		delete(f.outstanding, id)
	}
	fw := f.id
	f.mu.Unlock()
	// An accept is not repeated: the leader forgets offers when it changes,
	// so a retry could only be refused.
	err := f.req.Once(ctx, f.subject(protocol.VerbAccept, fw), protocol.MsgAcceptRequest,
		protocol.AcceptRequest{FrameworkID: fw, OfferIDs: ids,
			Operations: []protocol.Operation{{Type: protocol.OperationLaunch, Tasks: tasks}}}, nil)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ti := range tasks {
		t := f.tasks[ti.TaskID]
		t.info = ti
		if t.outcome != AcceptUnknown {
			continue // a status update settled it first
		}
		switch {
		case err == nil:
			t.outcome = AcceptOK
			f.countLaunchLocked(ti)
		case ambiguous(err):
			t.outcome = AcceptUnknown
		default:
			t.outcome = AcceptRefused
		}
	}
	if err != nil {
		f.leaderForgot(err)
		return fmt.Errorf("accept %v: %w", ids, err)
	}
	return nil
}

// leaderForgot re-subscribes after the leader disowned an offer it made,
// or left a request unanswered: the leader may have lost and regained
// leadership (announcements carry no term yet), forgetting the framework's
// demand with its offers, and a re-subscription also reconciles the
// launches left unanswered.
func (f *TestFramework) leaderForgot(err error) {
	if errors.Is(err, protocol.ErrUnknownOffer) || err != nil && ambiguous(err) {
		f.resubscribeSoon()
	}
}

// countLaunchLocked lowers the remaining demand of the shape the task
// matches, as the allocator does, and counts auto-launched tasks.
func (f *TestFramework) countLaunchLocked(t protocol.TaskInfo) {
	for i := range f.demand {
		if sameScalars(f.demand[i].Resources, t.Resources) && f.demand[i].Count > 0 {
			f.demand[i].Count--
			break
		}
	}
	if al := f.opts.AutoLaunch; al != nil && sameScalars(al.Resources, t.Resources) {
		f.launched++
	}
}

func sameScalars(a, b protocol.Resources) bool {
	for k, v := range a.Scalars {
		if b.Scalars[k] != v {
			return false
		}
	}
	for k, v := range b.Scalars {
		if a.Scalars[k] != v {
			return false
		}
	}
	return len(a.Ranges) == 0 && len(b.Ranges) == 0
}

// Decline returns offers with a refuse filter of refuse (zero installs
// none).
func (f *TestFramework) Decline(refuse time.Duration, offers ...protocol.Offer) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.RetryTimeout)
	defer cancel()
	ids := make([]protocol.OfferID, len(offers))
	for i, o := range offers {
		ids[i] = o.ID
	}
	return f.decline(ctx, refuse, ids)
}

func (f *TestFramework) decline(ctx context.Context, refuse time.Duration, ids []protocol.OfferID) error {
	f.mu.Lock()
	for _, id := range ids {
		delete(f.outstanding, id)
	}
	fw := f.id
	f.mu.Unlock()
	err := f.req.Once(ctx, f.subject(protocol.VerbDecline, fw), protocol.MsgDeclineRequest,
		protocol.DeclineRequest{FrameworkID: fw, OfferIDs: ids, Filters: &protocol.Filters{RefuseSeconds: refuse.Seconds()}}, nil)
	f.leaderForgot(err)
	return err
}

// Demand replaces the declared demand; it is declared again, minus what
// was launched since, after every re-subscribe.
func (f *TestFramework) Demand(shapes ...protocol.TaskShape) error {
	f.mu.Lock()
	f.demand = slices.Clone(shapes)
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.RetryTimeout)
	defer cancel()
	return f.sendDemand(ctx, shapes)
}

// Kill asks the leader to kill a task.
func (f *TestFramework) Kill(task protocol.TaskID) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.RetryTimeout)
	defer cancel()
	return f.req.Retry(ctx, f.subject(protocol.VerbKill, f.ID()), protocol.MsgKillRequest,
		protocol.KillRequest{FrameworkID: f.ID(), TaskID: task}, nil)
}

// RegisterCoflow registers (or grows) one of the framework's coflows.
func (f *TestFramework) RegisterCoflow(id string, flows ...protocol.FlowSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.RetryTimeout)
	defer cancel()
	return f.req.Retry(ctx, f.subject(protocol.VerbCoflowRegister, f.ID()), protocol.MsgCoflowRegisterRequest,
		protocol.CoflowRegisterRequest{FrameworkID: f.ID(), CoflowID: id, Flows: flows}, nil)
}

// Launched counts auto-launched tasks known to run.
func (f *TestFramework) Launched() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.launched
}

// autoLaunch packs as many AutoLaunch tasks into each queued offer as fit
// and the limit allows, and declines offers it cannot use.
func (f *TestFramework) autoLaunch(ctx context.Context) {
	al := f.opts.AutoLaunch
	for {
		f.mu.Lock()
		if len(f.offerQueue) == 0 || f.closed {
			f.mu.Unlock()
			return
		}
		o := f.offerQueue[0]
		f.offerQueue = f.offerQueue[1:]
		_, live := f.outstanding[o.ID]
		n := fits(o.Resources, al.Resources)
		if al.Max > 0 {
			n = min(n, int64(al.Max-f.launched-f.unsettledLocked()))
		}
		var tasks []protocol.TaskInfo
		for range max(n, 0) {
			f.seq++
			tasks = append(tasks, protocol.TaskInfo{
				TaskID:    protocol.TaskID(f.opts.Name + "-" + strconv.Itoa(f.seq)),
				Resources: al.Resources.Clone(),
				Command:   protocol.CommandInfo{Value: "true"},
				Labels:    al.Behaviour.Labels(),
			})
		}
		f.mu.Unlock()
		if !live {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, f.opts.RetryTimeout)
		var err error
		if len(tasks) == 0 {
			err = f.decline(rctx, time.Second, []protocol.OfferID{o.ID})
		} else {
			err = f.accept(rctx, []protocol.OfferID{o.ID}, o.AgentID, tasks)
		}
		cancel()
		f.logger.Trace("auto launch", "offer_id", o.ID, "tasks", len(tasks), "error", err)
	}
}

// unsettledLocked counts launches whose accept went unanswered: they may
// run, so they count against AutoLaunch.Max until settled.
func (f *TestFramework) unsettledLocked() int {
	n := 0
	for _, t := range f.tasks {
		if t.outcome == AcceptUnknown {
			n++
		}
	}
	return n
}

// fits returns how many tasks of size unit fit in res.
func fits(res, unit protocol.Resources) int64 {
	n := int64(-1)
	for k, v := range unit.Scalars {
		if v <= 0 {
			continue
		}
		q := res.Scalars[k] / v
		if n < 0 || q < n {
			n = q
		}
	}
	return max(n, 0)
}
