package master

import (
	"context"
	"fmt"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// accept launches tasks on offers. The allocator re-validates the accept
// against the current offer book first (stale, forged or someone else's
// offers, or tasks beyond the offers, are refused and change nothing);
// then the launch is committed through Raft, and only then sent to the
// agent, so a launch the master forgets can never run.
func (l *leader) accept(ctx context.Context, r *protocol.AcceptRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	var tasks []protocol.TaskInfo
	for _, op := range r.Operations {
		for _, t := range op.Tasks {
			t.GroupID = ""
			if op.Type == protocol.OperationLaunchGroup {
				t.GroupID = op.GroupID
			}
			tasks = append(tasks, t)
		}
	}
	if len(tasks) == 0 {
		return l.declineCounted(&protocol.DeclineRequest{FrameworkID: r.FrameworkID, OfferIDs: r.OfferIDs, Filters: r.Filters})
	}
	if err := l.runAs(r.FrameworkID, tasks); err != nil {
		l.refuseLaunch(r, err)
		return err
	}
	resources := make([]protocol.Resources, len(tasks))
	for i, t := range tasks {
		resources[i] = t.Resources
	}
	now := time.Now()
	l.mu.Lock()
	var made time.Time
	// Every task must name the offers' agent; the allocator checks the rest.
	if first, ok := l.alloc.Offer(r.OfferIDs[0]); ok && first.FrameworkID == r.FrameworkID {
		made = first.Made
		for _, t := range tasks {
			if t.AgentID != first.AgentID {
				l.mu.Unlock()
				err := fmt.Errorf("%w: task %s names agent %s, the offers are on %s",
					protocol.ErrOfferMismatch, t.TaskID, t.AgentID, first.AgentID)
				l.refuseLaunch(r, err)
				return err
			}
		}
	}
	if err := l.checkNonPreemptible(r.FrameworkID, r.OfferIDs, tasks); err != nil {
		l.mu.Unlock()
		l.refuseLaunch(r, err)
		return err
	}
	acc, err := l.alloc.AcceptTasks(r.FrameworkID, r.OfferIDs, resources, now)
	if err == nil && acc.Remainder && r.Filters != nil && r.Filters.RefuseSeconds > 0 {
		// As in Mesos, an accept's filters apply to what it left unused;
		// without filters the remainder is offered again at once.
		refuse := time.Duration(r.Filters.RefuseSeconds * float64(time.Second))
		if ferr := l.alloc.RefuseAgent(r.FrameworkID, acc.Agent, refuse, now); ferr != nil {
			l.logger.Warn("could not filter an accept's remainder", "framework_id", r.FrameworkID, "error", ferr)
		}
	}
	l.mu.Unlock()
	if err != nil {
		l.refuseLaunch(r, err)
		return err
	}
	l.metrics.launchedAfter(made, now)
	agent := acc.Agent
	// A task's kind is the kind of offer it was launched on, whatever the
	// framework sent; its resources name the GPU devices the allocator
	// gave it.
	for i := range tasks {
		tasks[i].Kind = protocol.OfferKind(acc.Kinds[i])
		tasks[i].Resources = acc.Tasks[i]
		resources[i] = acc.Tasks[i]
	}
	_, err = l.apply(ctx, state.CmdLaunchTasks, state.LaunchTasks{
		FrameworkID: r.FrameworkID, AgentID: agent, Tasks: tasks, Time: now.UnixNano(),
	})
	if err != nil {
		l.mu.Lock()
		for _, res := range resources {
			if rerr := l.alloc.Recover(r.FrameworkID, agent, res); rerr != nil {
				l.logger.Warn("could not return resources of a refused launch", "error", rerr)
			}
		}
		l.mu.Unlock()
		l.kick()
		return err
	}
	l.sendLaunches(agent, r.FrameworkID, tasks)
	return nil
}
