package runner

import (
	"errors"

	"github.com/allot-project/allot/protocol"
)

// Errors returned by the runner wrap one of these, with detail; match them
// with errors.Is. Reason maps them to task status reasons.
var (
	// ErrConfig is returned by Config.Validate and New for an unusable
	// Config.
	ErrConfig = errors.New("runner: invalid config")
	// ErrUnsupported means the runner cannot work on this platform, or
	// cgroups were required and are not usable.
	ErrUnsupported = errors.New("runner: unsupported")
	// ErrInvalidSpec means the Spec is invalid (name, command, env, limits,
	// a user the agent does not know or cannot switch to), or a task was
	// already started in its sandbox.
	ErrInvalidSpec = errors.New("runner: invalid task spec")
	// ErrFetch means a URI could not be fetched: network error, bad HTTP
	// status, sha256 mismatch, unsupported scheme, unreadable archive.
	ErrFetch = errors.New("runner: fetch failed")
	// ErrSandboxEscape means a URI's output file or an archive entry would
	// be written outside the sandbox or into its reserved .allot directory
	// (where earlier versions kept their records), by an absolute path, a
	// ".." element or a symlink.
	ErrSandboxEscape = errors.New("runner: path escapes the sandbox")
	// ErrStart means the task's process could not be started, e.g. its
	// executable was not found.
	ErrStart = errors.New("runner: task did not start")
	// ErrNotFound is returned by Reattach for a sandbox where no task was
	// started.
	ErrNotFound = errors.New("runner: no task in sandbox")
)

// Reason returns the protocol reason a task status should carry for an
// error from Prepare or Start: fetch_failed for ErrFetch and
// ErrSandboxEscape, task_invalid for ErrInvalidSpec, command_failed for
// ErrStart; "" for nil and other errors.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrFetch), errors.Is(err, ErrSandboxEscape):
		return protocol.ReasonFetchFailed
	case errors.Is(err, ErrInvalidSpec):
		return protocol.ReasonTaskInvalid
	case errors.Is(err, ErrStart):
		return protocol.ReasonCommandFailed
	}
	return ""
}
