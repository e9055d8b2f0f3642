package dag

import (
	"fmt"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// status handles a task's status: a finished task may complete its job
// or make child stages runnable; a task that failed, was killed or was
// refused (ERROR) runs again, unless it has failed WithMaxAttempts times,
// which fails its job. A task dropped or lost, one the master took back
// (preempted, revoked, drained) and one the scheduler released in its
// place run again without counting as a failure. Statuses of tasks the
// scheduler does not run (other frameworks' helpers, ended jobs) and
// non-terminal ones are ignored.
func (s *Scheduler) status(d driver, st protocol.TaskStatus) {
	s.mu.Lock()
	defer s.unlock()
	s.drv = d
	a, ok := s.tasks[st.TaskID]
	if !ok || s.closed || !st.State.Terminal() {
		return
	}
	js := a.js
	delete(s.tasks, st.TaskID)
	delete(js.running, st.TaskID)
	now := s.cfg.clock.Now()
	if st.State == protocol.TaskFinished {
		if err := js.job.TaskFinished(a.task, now); err != nil {
			s.logger.Error("task finished", "task_id", st.TaskID, "error", err)
		}
		if js.job.Done() {
			s.endLocked(js, nil)
			s.reshareLocked()
			s.replanLocked(s.active...)
		} else {
			s.replanLocked(js)
		}
	} else if neverRan(st) {
		// Dropped or lost: run again, no failed attempt.
		if err := js.job.TaskFailed(a.task, now); err != nil {
			s.logger.Error("task not launched", "task_id", st.TaskID, "error", err)
		}
		s.logger.Debug("task dropped or lost, to run again", "task_id", st.TaskID, "state", st.State,
			"reason", st.Reason, "message", st.Message)
		s.replanLocked(js)
	} else if a.released || takenBack(st) {
		if err := js.job.TaskFailed(a.task, now); err != nil {
			s.logger.Error("task taken back", "task_id", st.TaskID, "error", err)
		}
		if a.released {
			js.res.Released++
		} else {
			js.res.Preempted++
		}
		s.logger.Debug("task taken back, to run again", "task_id", st.TaskID, "reason", st.Reason,
			"released", a.released)
		s.replanLocked(js)
	} else {
		if err := js.job.TaskFailed(a.task, now); err != nil {
			s.logger.Error("task failed", "task_id", st.TaskID, "error", err)
		}
		js.res.Failures++
		js.failures[a.task]++
		s.logger.Debug("task failed", "task_id", st.TaskID, "state", st.State, "reason", st.Reason,
			"failures", js.failures[a.task])
		if js.failures[a.task] >= s.cfg.maxAttempts {
			s.failJobLocked(js, a.task, fmt.Errorf("last %s (%s): %s", st.State, st.Reason, st.Message))
		} else {
			s.replanLocked(js)
		}
	}
	ctx, cancel := s.callCtx()
	defer cancel()
	s.syncLocked(ctx)
}

// neverRan reports a status that ends a task through no fault of its
// own, as docs/sdk.md's table of states says: DROPPED (it never started:
// stale offers, an agent that restarted during its launch) or LOST (the
// master lost track of it with its agent, or never launched it; a
// framework that is not partition aware hears LOST for DROPPED).
func neverRan(st protocol.TaskStatus) bool {
	return st.State == protocol.TaskDropped || st.State == protocol.TaskLost
}

// takenBack reports a status that ends a task the master killed to give
// its resources to others (preemption, revocation) or to drain its agent:
// the task's own fault as little as a stale launch.
func takenBack(st protocol.TaskStatus) bool {
	switch st.Reason {
	case protocol.ReasonPreempted, protocol.ReasonRevoked, protocol.ReasonAgentDrained:
		return true
	}
	return false
}

// failJobLocked ends js as failed because task failed too often (last
// with cause), and kills the job's running tasks.
func (s *Scheduler) failJobLocked(js *jobState, task altruism.TaskID, cause error) {
	if js.ended {
		return
	}
	running := js.running
	js.running = map[protocol.TaskID]*attempt{}
	s.endLocked(js, fmt.Errorf("%w: task %s failed %d times: %w", ErrJobFailed, task, js.failures[task], cause))
	for id := range running {
		delete(s.tasks, id)
	}
	if s.drv != nil {
		ctx, cancel := s.callCtx()
		defer cancel()
		for id, a := range running {
			if err := s.drv.Kill(ctx, id, a.agent, 0); err != nil {
				s.logger.Warn("kill task of failed job", "task_id", id, "error", err)
			}
		}
	}
	s.reshareLocked()
	s.replanLocked(s.active...)
}
