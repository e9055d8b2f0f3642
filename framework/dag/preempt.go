package dag

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

var _ framework.PreemptionHandler = (*Scheduler)(nil)

// Preempting handles the master's preemption warnings: when it means to
// revoke some of the scheduler's tasks that run on revocable (leftover)
// resources, the scheduler gives back others that have made less progress
// instead; see preempting.
func (s *Scheduler) Preempting(d *framework.Driver, ev protocol.PreemptionEvent) { s.preempting(d, ev) }

// preempting records which attempts are warned and, for each warned
// revocation (protocol.ReasonRevoked), releases in its place the running
// revocable attempt on the same agent, at least as large, that started
// last, if it started after the warned one: the master then has the
// resources it wanted back and withdraws the warning, and less work is
// lost. Warned attempts with the most progress are covered first; an
// attempt covers one warned attempt at most, and warned attempts never
// cover others. Whatever is killed, released or taken back, runs again
// without counting as a failure (status). Other reasons (preemption for a
// guarantee or a fair share, a drain) are left to the master: they name
// the tasks the master's plan chose, which releasing others would not
// spare.
func (s *Scheduler) preempting(d driver, ev protocol.PreemptionEvent) {
	s.mu.Lock()
	defer s.unlock()
	s.drv = d
	if s.closed {
		return
	}
	for _, t := range ev.Tasks {
		if a, ok := s.tasks[t.TaskID]; ok {
			a.warned = !ev.Withdrawn
		}
	}
	if ev.Withdrawn {
		return
	}
	swaps := s.releasesLocked(ev.Tasks)
	if len(swaps) == 0 {
		return
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	now := s.cfg.clock.Now()
	for _, sw := range swaps {
		w, r := s.tasks[sw.warned], s.tasks[sw.release]
		r.released, w.cover = true, sw.release
		s.logger.Info("releasing a revocable task in place of a warned one", "task_id", sw.release,
			"warned_task_id", sw.warned, "agent_id", r.agent, "ran", now.Sub(r.started),
			"warned_ran", now.Sub(w.started))
		if err := s.drv.Kill(ctx, sw.release, r.agent, 0); err != nil {
			s.logger.Warn("release task", "task_id", sw.release, "error", err)
			r.released, w.cover = false, ""
		}
	}
}

// swap is a warned attempt and the attempt released in its place.
type swap struct {
	warned, release protocol.TaskID
}

// releasesLocked chooses the attempts to release in place of the warned
// revocations of warned (see preempting).
func (s *Scheduler) releasesLocked(warned []protocol.PreemptedTask) []swap {
	type target struct {
		id   protocol.TaskID
		a    *attempt
		need protocol.Resources
	}
	var targets []target
	for _, t := range warned {
		a, ok := s.tasks[t.TaskID]
		if !ok || t.Reason != protocol.ReasonRevoked || a.released {
			continue
		}
		if c, ok := s.tasks[a.cover]; ok && c.released {
			continue // covered already: its release is under way
		}
		need := t.Resources
		if need.IsEmpty() {
			need = a.res
		}
		targets = append(targets, target{id: t.TaskID, a: a, need: need})
	}
	// The most progress first: those have the most to lose.
	slices.SortFunc(targets, func(x, y target) int {
		return cmp.Or(x.a.started.Compare(y.a.started), strings.Compare(string(x.id), string(y.id)))
	})
	taken := map[protocol.TaskID]bool{}
	var out []swap
	for _, w := range targets {
		var best protocol.TaskID
		var bestAt time.Time
		for id, c := range s.tasks {
			if c.agent != w.a.agent || !c.revocable || c.warned || c.released || taken[id] ||
				!c.started.After(w.a.started) || !c.res.Contains(w.need) {
				continue
			}
			if best == "" || c.started.After(bestAt) || (c.started.Equal(bestAt) && id < best) {
				best, bestAt = id, c.started
			}
		}
		if best != "" {
			taken[best] = true
			out = append(out, swap{warned: w.id, release: best})
		}
	}
	return out
}
