package master

import (
	"context"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
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
	if err := l.checkNonPreemptible(r.FrameworkID, tasks); err != nil {
		l.refuseLaunch(r, err)
		return err
	}
	launch := offers.Launch{Framework: r.FrameworkID, Offers: r.OfferIDs, Tasks: make([]offers.LaunchTask, len(tasks))}
	for i, t := range tasks {
		launch.Tasks[i] = offers.LaunchTask{ID: t.TaskID, Agent: t.AgentID, Resources: t.Resources, NonPreemptible: t.NonPreemptible}
	}
	if r.Filters != nil && r.Filters.RefuseSeconds > 0 {
		launch.RefuseRemainder = time.Duration(r.Filters.RefuseSeconds * float64(time.Second))
	}
	now := time.Now()
	l.mu.Lock()
	acc, err := l.alloc.Launch(launch, now)
	l.mu.Unlock()
	if err != nil {
		l.refuseLaunch(r, err)
		return err
	}
	made := acc.Made
	l.metrics.launchedAfter(made, now)
	agent := acc.Agent
	// A task's kind is the kind of offer it was launched on, whatever the
	// framework sent; its resources name the GPU devices the allocator
	// gave it.
	for i := range tasks {
		tasks[i].Kind = protocol.OfferKind(acc.Kinds[i])
		tasks[i].Resources = acc.Tasks[i]
	}
	_, err = l.apply(ctx, state.CmdLaunchTasks, state.LaunchTasks{
		FrameworkID: r.FrameworkID, AgentID: agent, Tasks: tasks, Time: now.UnixNano(),
	})
	if err != nil {
		l.mu.Lock()
		for _, res := range acc.Tasks {
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
