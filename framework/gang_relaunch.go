package framework

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/allot-project/allot/protocol"
)

// A gang with GangSpec.Relaunch stays all or nothing once launched: the
// driver tells it of its members' statuses (status) and of the master's
// preemption warnings (warned), and losing any member loses the whole
// gang, which kills the others and acquires and launches all its tasks
// again under new IDs. Both calls come from the driver's callback
// goroutine, before the scheduler's own callback sees the event.

// launched records a successful launch of tasks: a gang without Relaunch
// is done; one with it watches its members from now on.
func (g *Gang) launched(ctx context.Context, tasks []protocol.TaskInfo) {
	g.mu.Lock()
	g.launches++
	launches := g.launches
	if g.spec.Relaunch == 0 || g.state != gangLaunching {
		g.mu.Unlock()
		g.finish(ctx, tasks, nil)
		return
	}
	g.state = gangRunning
	g.tasks = tasks
	g.live = make(map[protocol.TaskID]protocol.AgentID, len(tasks))
	for _, t := range tasks {
		g.live[t.TaskID] = t.AgentID
	}
	g.mu.Unlock()
	g.logger.Info("gang launched", "tasks", len(tasks), "launch", launches)
	if err := g.d.setGangDemand(ctx, g, nil); err != nil && ctx.Err() == nil {
		g.logger.Warn("could not withdraw the gang's demand", "error", err)
	}
}

// status follows the members of a running gang: the gang is done once
// they have all finished, and lost when one ends otherwise.
func (g *Gang) status(st protocol.TaskStatus) {
	if !st.State.Terminal() {
		return
	}
	g.mu.Lock()
	if _, member := g.live[st.TaskID]; !member || g.state != gangRunning {
		g.mu.Unlock()
		return
	}
	delete(g.live, st.TaskID)
	if st.State != protocol.TaskFinished {
		g.loseLocked(st.TaskID, fmt.Sprintf("ended %s (%s)", st.State, st.Reason))
		return
	}
	done, tasks := len(g.live) == 0, g.tasks
	g.mu.Unlock()
	if done {
		g.settle(tasks, nil)
	}
}

// warned loses a running gang when ev names one of its live members.
func (g *Gang) warned(ev protocol.PreemptionEvent) {
	g.mu.Lock()
	if g.state == gangRunning {
		for _, t := range ev.Tasks {
			if _, member := g.live[t.TaskID]; member {
				g.loseLocked(t.TaskID, "warned of its kill ("+t.Reason+")")
				return
			}
		}
	}
	g.mu.Unlock()
}

// loseLocked ends the current launch because member was lost (why says
// how): the live members are killed, and the gang acquires its tasks again
// under new IDs, or fails with ErrGangLost when no relaunch is left. g.mu
// is held; loseLocked releases it.
func (g *Gang) loseLocked(member protocol.TaskID, why string) {
	var kill []protocol.TaskInfo
	for _, t := range g.tasks {
		if _, ok := g.live[t.TaskID]; ok {
			kill = append(kill, t)
		}
	}
	clear(g.live)
	lost, launches := g.tasks, g.launches
	var err error
	if g.spec.Relaunch > 0 && launches > g.spec.Relaunch {
		err = fmt.Errorf("%w: %s: task %s %s, after %d launch(es)", ErrGangLost, g.spec.GroupID, member, why, launches)
	} else if tasks, rerr := relaunchTasks(g.base, launches); rerr != nil {
		err = fmt.Errorf("%w: %s: task %s %s: %w", ErrGangLost, g.spec.GroupID, member, why, rerr)
	} else {
		g.spec.Tasks = tasks
		g.tasks = nil
		g.state = gangAcquiring
		g.attempt = 1
		g.deadline = time.Now().Add(g.hold())
	}
	g.mu.Unlock()
	g.logger.Warn("gang lost a member", "task_id", member, "why", why, "killing", len(kill),
		"relaunch", err == nil)
	if err != nil {
		g.settle(lost, err)
	} else {
		select {
		case g.resumed <- struct{}{}:
		default:
		}
	}
	g.d.background(func(ctx context.Context) {
		g.kill(ctx, kill)
		g.mu.Lock()
		acquiring := g.state == gangAcquiring && g.launches == launches
		g.mu.Unlock()
		if !acquiring || g.spec.NoDemand {
			return
		}
		if derr := g.d.setGangDemand(ctx, g, g.shapes); derr != nil && ctx.Err() == nil {
			g.logger.Warn("could not declare the gang's demand", "error", derr)
		}
	})
}

// stopWatching fails a gang that watches its members when the driver
// stops: nobody tells it of them any more.
func (g *Gang) stopWatching() {
	g.mu.Lock()
	running, tasks := g.state == gangRunning, g.tasks
	g.mu.Unlock()
	if running {
		g.settle(tasks, fmt.Errorf("%w: %s: %w", ErrGangCanceled, g.spec.GroupID, ErrNotRunning))
	}
}

// relaunchTasks are the gang's tasks for its n-th relaunch: base renamed
// "<id>.r<n>".
func relaunchTasks(base []protocol.TaskInfo, n int) ([]protocol.TaskInfo, error) {
	out := slices.Clone(base)
	for i := range out {
		id := protocol.TaskID(string(base[i].TaskID) + ".r" + strconv.Itoa(n))
		if !protocol.ValidID(string(id)) {
			return nil, fmt.Errorf("%w: relaunched task id %q", ErrInvalidSpec, id)
		}
		out[i].TaskID = id
	}
	return out, nil
}
