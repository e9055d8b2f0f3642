package dag

import (
	"context"
	"fmt"

	"github.com/allot-project/allot/framework/altruism"
)

// Rerun runs a finished task of a job again because its output was lost,
// as a MapReduce framework re-runs the maps whose outputs were on a
// machine that died: the task is planned like a new one and launched as
// its next attempt, and the tasks of its child stages that have not
// started wait until it finishes again (those running go on). It does not
// count as a failure. The demand is declared with ctx.
//
// It returns an error wrapping ErrUnknownJob for a job never submitted,
// ErrJobEnded for one that has ended, and altruism.ErrUnknownStage,
// altruism.ErrUnknownTask or altruism.ErrTaskState (the task has not
// finished, or no unfinished task reads its output) otherwise.
func (s *Scheduler) Rerun(ctx context.Context, jobID, stage string, index int) error {
	s.mu.Lock()
	defer s.unlock()
	js, ok := s.jobs[jobID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownJob, jobID)
	}
	if js.ended {
		return fmt.Errorf("%w: %s", ErrJobEnded, jobID)
	}
	id := altruism.TaskID{Stage: stage, Index: index}
	if err := js.job.TaskLost(id); err != nil {
		return fmt.Errorf("rerun %s of job %s: %w", id, jobID, err)
	}
	s.logger.Info("task runs again: its output was lost", "job_id", jobID, "task", id.String())
	s.replanLocked(js)
	s.syncLocked(ctx)
	return nil
}
