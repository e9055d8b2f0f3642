package master

import (
	"maps"
	"slices"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// Preemption and revocation (docs/preemption.md). Every
// Config.Preemption.Interval the leader lists the live tasks, asks the
// allocator's planner what to take back, warns the frameworks of the tasks
// it newly chose (a PreemptionEvent with the deadline), withdraws warnings
// no longer needed, and kills, once their deadline has passed, the warned
// tasks the plan still needs. Warnings are soft state: a new leader plans
// afresh, its needs waiting out the delay again.

// warning is a task warned of its preemption.
type warning struct {
	reason   string
	need     string
	deadline time.Time
	// killedAt is when the kill was last sent (zero: not yet).
	killedAt time.Time
}

// preemptions is the leader's preemption memory, guarded by leader.mu.
type preemptions struct {
	warned map[state.TaskKey]*warning
	// needs are the last plan's needs, for explain.
	needs []offers.Need
	// wakeAt is when a decision is already asked for (preemptAt).
	wakeAt time.Time
}

// killResend is how long a kill at a deadline waits for the task to end
// before it is sent again.
const killResend = 10 * time.Second

// preempt runs one preemption decision.
func (l *leader) preempt(now time.Time) {
	cfg := l.cfg.Preemption
	view := l.view()
	tasks := runningTasks(view)
	// task is a live task of the view, nil for one that ended.
	task := func(k state.TaskKey) *state.Task {
		if t, ok := view.Task(k.FrameworkID, k.TaskID); ok && live(t) {
			return t
		}
		return nil
	}
	l.mu.Lock()
	l.markWarnedLocked(tasks, task)
	plan := l.alloc.PlanPreemption(tasks, now)
	l.preemption.needs = plan.Needs
	if !l.preemption.wakeAt.After(now) {
		l.preemption.wakeAt = time.Time{}
	}
	for _, n := range plan.Needs {
		// A need whose delay ends between ticks is acted on then.
		if n.EligibleAt.After(now) {
			l.preemptAtLocked(n.EligibleAt, now)
		}
	}
	deadline := now.Add(cfg.Deadline)
	act := l.followPlanLocked(plan, task, now, deadline)
	if len(plan.Preempt) > 0 {
		l.preemptAtLocked(deadline, now) // kill at the deadline, not the next tick
	}
	l.mu.Unlock()

	for _, fw := range slices.Sorted(maps.Keys(act.warn)) {
		l.warnTasks(fw, protocol.PreemptionEvent{Tasks: act.warn[fw], Deadline: deadline.UnixNano()})
	}
	for _, fw := range slices.Sorted(maps.Keys(act.withdraw)) {
		l.warnTasks(fw, protocol.PreemptionEvent{Tasks: act.withdraw[fw], Withdrawn: true})
	}
	for i, t := range act.kill {
		l.killForMaster(t, act.killReasons[i], 0)
	}
	l.metrics.preemptionDecision()
	if n := len(plan.Preempt); n > 0 {
		l.metrics.preempted(n)
		l.logger.Info("tasks warned of preemption", "tasks", n, "deadline", deadline)
	}
}

// runningTasks lists the view's live tasks for the planner. The list is
// built outside the lock; the few warned tasks are marked under it
// (markWarnedLocked).
func runningTasks(view *state.View) []offers.RunningTask {
	tasks := make([]offers.RunningTask, 0, view.NumTasks())
	for _, t := range view.Tasks() {
		if live(t) {
			tasks = append(tasks, offers.RunningTask{
				FrameworkID: t.FrameworkID, TaskID: t.ID, AgentID: t.AgentID, Resources: t.Info.Resources,
				Revocable: t.Kind == protocol.OfferKind(offers.KindLeftover), NonPreemptible: t.Info.NonPreemptible,
				StartedAt: time.Unix(0, t.LaunchedAt),
			})
		}
	}
	return tasks
}

// markWarnedLocked forgets the warnings of tasks that ended (task returns
// nil for them) and marks the tasks still warned. l.mu is held.
func (l *leader) markWarnedLocked(tasks []offers.RunningTask, task func(state.TaskKey) *state.Task) {
	if l.preemption.warned == nil {
		l.preemption.warned = map[state.TaskKey]*warning{}
	}
	for k := range l.preemption.warned {
		if task(k) == nil {
			delete(l.preemption.warned, k) // ended
		}
	}
	if len(l.preemption.warned) > 0 {
		for i := range tasks {
			_, tasks[i].Warned = l.preemption.warned[state.TaskKey{FrameworkID: tasks[i].FrameworkID, TaskID: tasks[i].TaskID}]
		}
	}
}

// preemptActions are what one decision sends once l.mu is released: the
// warnings and withdrawals by framework, and the kills with their reasons.
type preemptActions struct {
	warn, withdraw map[protocol.FrameworkID][]protocol.PreemptedTask
	kill           []*state.Task
	killReasons    []string
}

// followPlanLocked records the plan's warnings: the new victims are
// warned with deadline, the kept ones past their deadline killed (again
// after killResend), the released ones withdrawn. l.mu is held.
func (l *leader) followPlanLocked(plan offers.PreemptionPlan, task func(state.TaskKey) *state.Task, now, deadline time.Time) preemptActions {
	act := preemptActions{
		warn:     map[protocol.FrameworkID][]protocol.PreemptedTask{},
		withdraw: map[protocol.FrameworkID][]protocol.PreemptedTask{},
	}
	for _, v := range plan.Preempt {
		k := state.TaskKey{FrameworkID: v.FrameworkID, TaskID: v.TaskID}
		l.preemption.warned[k] = &warning{reason: v.Reason, need: v.For, deadline: deadline}
		if t := task(k); t != nil {
			act.warn[v.FrameworkID] = append(act.warn[v.FrameworkID], preempted(t, v.Reason))
		}
	}
	for _, v := range plan.Keep {
		k := state.TaskKey{FrameworkID: v.FrameworkID, TaskID: v.TaskID}
		w := l.preemption.warned[k]
		if w == nil || now.Before(w.deadline) || (!w.killedAt.IsZero() && now.Sub(w.killedAt) < killResend) {
			continue
		}
		t := task(k)
		if t == nil {
			continue
		}
		w.killedAt = now
		act.kill = append(act.kill, t)
		act.killReasons = append(act.killReasons, w.reason)
	}
	for _, v := range plan.Release {
		k := state.TaskKey{FrameworkID: v.FrameworkID, TaskID: v.TaskID}
		w := l.preemption.warned[k]
		delete(l.preemption.warned, k)
		if w == nil || !w.killedAt.IsZero() {
			continue // a kill sent is not taken back
		}
		if t := task(k); t != nil {
			act.withdraw[v.FrameworkID] = append(act.withdraw[v.FrameworkID], preempted(t, w.reason))
		}
	}
	return act
}

// live reports whether t holds resources the planner may take back.
func live(t *state.Task) bool { return !t.Terminal() && t.State != protocol.TaskUnreachable }

func preempted(t *state.Task, reason string) protocol.PreemptedTask {
	return protocol.PreemptedTask{TaskID: t.ID, AgentID: t.AgentID, Resources: t.Info.Resources, Reason: reason}
}

// preemptAtLocked asks for a decision at t, unless one is asked for
// earlier. l.mu is held.
func (l *leader) preemptAtLocked(t, now time.Time) {
	if w := l.preemption.wakeAt; !w.IsZero() && !w.After(t) {
		return
	}
	l.preemption.wakeAt = t
	time.AfterFunc(t.Sub(now), l.wakePreempt)
}

// wakePreempt asks the leader's loop for a preemption decision now.
func (l *leader) wakePreempt() {
	select {
	case l.preemptNow <- struct{}{}:
	default:
	}
}
