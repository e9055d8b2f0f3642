package dag

import "errors"

// Errors returned by this package. They are wrapped with detail; match
// them with errors.Is.
var (
	// ErrInvalidJob is returned by Submit for a job it cannot run: no ID,
	// an ID that cannot name tasks, no task builder, or a spec
	// altruism.NewJob refuses (the altruism error is wrapped too).
	ErrInvalidJob = errors.New("invalid job")
	// ErrDuplicateJob is returned by Submit for a job ID already
	// submitted to the scheduler.
	ErrDuplicateJob = errors.New("duplicate job")
	// ErrUnknownJob is returned by Wait and Result for a job ID never
	// submitted.
	ErrUnknownJob = errors.New("unknown job")
	// ErrJobEnded is returned by Rerun for a job that has ended.
	ErrJobEnded = errors.New("job ended")
	// ErrJobFailed is a failed job's Result.Err: one of its tasks failed
	// WithMaxAttempts times.
	ErrJobFailed = errors.New("job failed")
	// ErrClosed is returned by Submit after Close, and is the Result.Err
	// of every job that had not ended when the scheduler was closed.
	ErrClosed = errors.New("scheduler closed")
	// ErrInvalidOption is returned by New for an unusable option.
	ErrInvalidOption = errors.New("invalid option")
)
