package master

import (
	"sync"
	"time"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// Drains with a deadline (POST /v1/agents/{id}/drain with
// {"deadline": "10m"}). The deadline is replicated with the drain
// (state.Agent.DrainDeadline), so whichever master leads enforces it:
//
//   - when the drain starts (or its deadline changes), every framework with
//     live tasks on the agent gets a PreemptionEvent naming them, with the
//     deadline and reason agent_drained; a deadline lifted (the agent
//     activated, or drained again without one) is withdrawn the same way;
//   - on every heartbeat tick past the deadline, the leader kills the tasks
//     still live on the agent (killForMaster, agent_drained), sending a
//     kill again only after the status retry interval;
//   - a draining agent left with no live task is reported once per drain
//     and leader: an AgentChange in state "drained" (agentDrained) on the
//     cluster event stream, and "drained": true in GET /v1/state.
//
// Tasks launched non-preemptible are killed all the same: the operator is
// taking the machine away.

// agentDrained is the AgentChange state of a draining agent with no live
// task left.
const agentDrained = "drained"

// drainWatch is the leader's soft memory of drains: the drain-deadline
// kills it sent, and the drains it reported done. Its lock nests in no
// other.
type drainWatch struct {
	mu sync.Mutex
	// killed holds when each task past its agent's deadline was sent its
	// kill.
	killed map[state.TaskKey]time.Time
	// reported holds, per agent reported drained, the drain's start
	// (Agent.UpdatedAt), so a later drain is reported again.
	reported map[protocol.AgentID]int64
}

func newDrainWatch() *drainWatch {
	return &drainWatch{killed: map[state.TaskKey]time.Time{}, reported: map[protocol.AgentID]int64{}}
}

// shouldKill reports whether task k is due a kill now: never sent one, or
// sent one more than retry ago. It records the kill.
func (w *drainWatch) shouldKill(k state.TaskKey, now time.Time, retry time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if at, ok := w.killed[k]; ok && now.Sub(at) < retry {
		return false
	}
	w.killed[k] = now
	return true
}

// reportDrained reports whether the drain of agent id that started at
// since is to be reported now (the first time), and records it.
func (w *drainWatch) reportDrained(id protocol.AgentID, since int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if at, ok := w.reported[id]; ok && at == since {
		return false
	}
	w.reported[id] = since
	return true
}

// keep forgets the kills of tasks not in live and the reports of agents
// not in draining.
func (w *drainWatch) keep(live map[state.TaskKey]bool, draining map[protocol.AgentID]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.killed {
		if !live[k] {
			delete(w.killed, k)
		}
	}
	for id := range w.reported {
		if !draining[id] {
			delete(w.reported, id)
		}
	}
}

// checkDrains enforces the deadlines of the draining agents and reports
// those left empty. The leader's loop calls it every heartbeat interval.
func (l *leader) checkDrains(now time.Time) {
	v := l.view()
	live := map[state.TaskKey]bool{}
	draining := map[protocol.AgentID]bool{}
	for _, a := range v.Agents() {
		if a.State != state.AgentDraining {
			continue
		}
		draining[a.ID] = true
		tasks := liveTasks(v, a.ID)
		if len(tasks) == 0 {
			if l.drains.reportDrained(a.ID, a.UpdatedAt) {
				l.logger.Info("drained agent runs no task any more", "agent_id", a.ID)
				l.agentEvent(a.ID, a.Hostname, agentDrained)
			}
			continue
		}
		for _, t := range tasks {
			live[t.Key()] = true
		}
		if a.DrainDeadline == 0 || now.UnixNano() < a.DrainDeadline {
			continue
		}
		for _, t := range tasks {
			if l.drains.shouldKill(t.Key(), now, l.cfg.statusRetryInterval()) {
				l.killForMaster(t, protocol.ReasonAgentDrained, 0)
			}
		}
	}
	l.drains.keep(live, draining)
}

// drainWarnings tells the frameworks with live tasks on an agent whose
// drain deadline changed from before's to after's: a new deadline is a
// warning (PreemptionEvent with the deadline), a lifted one a withdrawal.
func (l *leader) drainWarnings(before, after *state.Agent) {
	old := before.DrainDeadline
	if before.State != state.AgentDraining {
		old = 0
	}
	switch {
	case after.DrainDeadline == old:
		return
	case after.DrainDeadline == 0:
		l.warnAgentTasks(after.ID, protocol.PreemptionEvent{Withdrawn: true})
	default:
		l.warnAgentTasks(after.ID, protocol.PreemptionEvent{Deadline: after.DrainDeadline})
	}
}

// warnAgentTasks sends every framework with live tasks on agent id ev,
// naming those tasks (reason agent_drained).
func (l *leader) warnAgentTasks(id protocol.AgentID, ev protocol.PreemptionEvent) {
	byFramework := map[protocol.FrameworkID][]protocol.PreemptedTask{}
	var order []protocol.FrameworkID
	for _, t := range liveTasks(l.view(), id) {
		if _, ok := byFramework[t.FrameworkID]; !ok {
			order = append(order, t.FrameworkID)
		}
		byFramework[t.FrameworkID] = append(byFramework[t.FrameworkID], protocol.PreemptedTask{
			TaskID: t.ID, AgentID: id, Resources: t.Info.Resources, Reason: protocol.ReasonAgentDrained,
		})
	}
	for _, fw := range order {
		e := ev
		e.Tasks = byFramework[fw]
		l.warnTasks(fw, e)
	}
}

// liveTasks are the tasks on agent id that have not ended.
func liveTasks(v *state.View, id protocol.AgentID) []*state.Task {
	var out []*state.Task
	for _, t := range v.TasksByAgent(id) {
		if !t.Terminal() {
			out = append(out, t)
		}
	}
	return out
}
