package altruism

import "errors"

// Errors returned by this package. They are wrapped with detail; match them
// with errors.Is.
var (
	// ErrNoStages is returned for a job without stages.
	ErrNoStages = errors.New("job has no stages")
	// ErrInvalidStage is returned for a stage without a name or without tasks.
	ErrInvalidStage = errors.New("invalid stage")
	// ErrDuplicateStage is returned when two stages share a name.
	ErrDuplicateStage = errors.New("duplicate stage")
	// ErrUnknownStage is returned for a reference to a stage the job lacks.
	ErrUnknownStage = errors.New("unknown stage")
	// ErrCycle is returned when stage dependencies form a cycle.
	ErrCycle = errors.New("stage dependencies form a cycle")
	// ErrInvalidDuration is returned for a duration estimate that is not
	// positive.
	ErrInvalidDuration = errors.New("invalid duration")
	// ErrInvalidDemand is returned for a task demand with a negative or
	// badly named scalar, or with ranges (ports are asked for by count in
	// protocol.TaskShape, not planned here).
	ErrInvalidDemand = errors.New("invalid demand")
	// ErrInvalidShare is returned for a share with a negative or badly named
	// scalar.
	ErrInvalidShare = errors.New("invalid share")
	// ErrUnknownTask is returned for a task index outside its stage.
	ErrUnknownTask = errors.New("unknown task")
	// ErrTaskState is returned for an event that does not fit the task's
	// state, such as finishing a task that is not running.
	ErrTaskState = errors.New("event does not fit task state")
	// ErrNotRunnable is returned when a task starts before every task of its
	// parent stages has finished.
	ErrNotRunnable = errors.New("task is not runnable")
	// ErrTimeOrder is returned when a task finishes or fails before it
	// started.
	ErrTimeOrder = errors.New("event before task start")
	// ErrInvalidConfig is returned by Config.Validate.
	ErrInvalidConfig = errors.New("invalid planner config")
	// ErrInvalidDraw is returned for a P(altruism) draw outside [0, 1).
	ErrInvalidDraw = errors.New("draw outside [0, 1)")
)
