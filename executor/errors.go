package executor

import "errors"

// Errors returned by the agent wrap one of these; match them with
// errors.Is.
var (
	// ErrConfig reports an invalid agent configuration.
	ErrConfig = errors.New("invalid agent configuration")
	// ErrDetect means the agent could not detect its resources (no
	// /proc/meminfo, say); configure them instead.
	ErrDetect = errors.New("cannot detect agent resources")
	// ErrCheckpoint means the checkpoint in the work directory could not be
	// read or written.
	ErrCheckpoint = errors.New("agent checkpoint")
	// ErrLocked means another agent process uses the work directory.
	ErrLocked = errors.New("work directory is in use by another agent")
	// ErrAlreadyRun is returned by a second call of Agent.Run.
	ErrAlreadyRun = errors.New("agent already ran")
)
