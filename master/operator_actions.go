package master

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// The operator's actions on frameworks and their tasks
// (POST /v1/frameworks/{id}/tasks/{task}/kill and
// POST /v1/frameworks/{id}/teardown, http_operator.go), as Mesos's
// KILL_TASK-by-operator and TEARDOWN calls. A refused action sends
// nothing and changes nothing; a done one is recorded on the cluster event
// stream as a ClusterEventOperator.

// operatorKill sends the agent of framework fw's task id a kill with
// reason killed_by_operator, and grace (0: the task's own grace period).
// Refused: a negative grace (ErrInvalidArgument), an unknown framework or
// task (ErrUnknownFramework, ErrUnknownTask), a task that already ended
// (ErrInvalidArgument), and a non-preemptible task unless force
// (ErrNotPreemptible). It returns the task as the kill found it.
func (l *leader) operatorKill(fw protocol.FrameworkID, id protocol.TaskID, force bool, grace time.Duration) (*state.Task, error) {
	if grace < 0 {
		return nil, protocol.Errorf(protocol.ErrInvalidArgument, "grace period %s is negative", grace)
	}
	v := l.view()
	if _, ok := v.Framework(fw); !ok {
		return nil, protocol.Errorf(protocol.ErrUnknownFramework, "framework %s", fw)
	}
	t, ok := v.Task(fw, id)
	if !ok {
		return nil, protocol.Errorf(protocol.ErrUnknownTask, "task %s of framework %s", id, fw)
	}
	if t.Terminal() {
		return nil, protocol.Errorf(protocol.ErrInvalidArgument, "task %s of framework %s already ended (%s)", id, fw, t.State)
	}
	if t.Info.NonPreemptible && !force {
		return nil, protocol.Errorf(protocol.ErrNotPreemptible,
			"task %s of framework %s was launched non-preemptible (force kills it)", id, fw)
	}
	l.killForMaster(t, protocol.ReasonKilledByOperator, grace)
	var detail []string
	if force {
		detail = append(detail, "forced")
	}
	if grace > 0 {
		detail = append(detail, "grace "+grace.String())
	}
	l.operatorEvent(protocol.OperatorAction{Action: protocol.OperatorKillTask, FrameworkID: fw, TaskID: id,
		AgentID: t.AgentID, Detail: strings.Join(detail, ", ")})
	return t, nil
}

// operatorTeardown removes framework fw as its own teardown would: its
// agents are told to shut its tasks down and its offers are rescinded.
// An unknown framework is refused (ErrUnknownFramework) and nothing
// changes; a disconnected one is removed all the same.
func (l *leader) operatorTeardown(ctx context.Context, fw protocol.FrameworkID) error {
	if err := l.removeFramework(ctx, fw); err != nil {
		return err
	}
	l.operatorEvent(protocol.OperatorAction{Action: protocol.OperatorTeardownFramework, FrameworkID: fw})
	return nil
}

// removeFramework removes a framework: its agents are told to shut its
// tasks down (those where only its completed tasks ran too) and its
// offers are rescinded. Its own teardown call, the operator's and the end
// of its failover timeout share it; an unknown framework is refused
// (ErrUnknownFramework) and nothing changes.
func (l *leader) removeFramework(ctx context.Context, id protocol.FrameworkID) error {
	if _, ok := l.view().Framework(id); !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, id)
	}
	res, err := l.apply(ctx, state.CmdRemoveFramework, state.RemoveFramework{FrameworkID: id})
	if err != nil {
		return err
	}
	if removed, ok := res.(state.RemoveFrameworkResult); ok {
		// Its completed tasks' agents too (shutdown_resend.go).
		var completed []*state.Task
		if cf, ok := completedFramework(l.view(), id); ok {
			completed = cf.Tasks
		}
		l.sendFrameworkShutdown(id, removed.Tasks, completed)
	}
	l.mu.Lock()
	rescinds, err := l.alloc.RemoveFramework(id)
	delete(l.opening, id)
	delete(l.subscribedAt, id)
	l.mu.Unlock()
	l.sendRescinds(rescinds)
	now := time.Now()
	l.coflows.RemoveFramework(now, id)
	l.pushCoflows(now)
	l.logger.Info("framework removed", "framework_id", id)
	l.publishClusterEvent(protocol.ClusterEvent{Type: protocol.ClusterEventFramework,
		Framework: &protocol.FrameworkChange{FrameworkID: id, State: "removed"}})
	l.kick()
	return err
}
