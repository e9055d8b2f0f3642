package state

import "github.com/allot-project/allot/protocol"

// Errors of this package. Domain errors returned by Apply wrap a protocol
// sentinel, so errors.Is and protocol.CodeOf work on them and they can be
// sent to clients as they are; the state never changes when Apply returns
// one. ErrCorrupt and the snapshot errors are local and fatal.
var (
	// ErrCorrupt: a command that cannot be decoded, or whose type is
	// unknown and not flagged ignorable. The log is corrupt; the FSM
	// panics on it.
	ErrCorrupt error = &sentinel{msg: "corrupt command"}

	// ErrSnapshotCorrupt: a snapshot stream that is not well formed (bad
	// magic, bad record, duplicate or dangling object, count or checksum
	// mismatch, trailing bytes).
	ErrSnapshotCorrupt error = &sentinel{msg: "corrupt snapshot"}
	// ErrSnapshotTruncated: a snapshot stream that ends early. It matches
	// ErrSnapshotCorrupt too.
	ErrSnapshotTruncated error = &sentinel{msg: "truncated snapshot", parent: ErrSnapshotCorrupt}
	// ErrSnapshotVersion: a snapshot in a format version this build does
	// not read.
	ErrSnapshotVersion error = &sentinel{msg: "unsupported snapshot version"}

	// ErrStaleAck: an acknowledgement of a status update that is no longer
	// the task's latest one. Nothing changes; it matches
	// protocol.ErrInvalidArgument.
	ErrStaleAck error = &sentinel{msg: "acknowledgement of a superseded status", parent: protocol.ErrInvalidArgument}
	// ErrTaskTerminal: a status update for a task that is already
	// terminal. Terminal states are final; it matches
	// protocol.ErrInvalidArgument.
	ErrTaskTerminal error = &sentinel{msg: "task is already terminal", parent: protocol.ErrInvalidArgument}
	// ErrAgentGone: the agent was marked gone and may not come back. It
	// matches protocol.ErrUnknownAgent, so the agent registers afresh.
	ErrAgentGone error = &sentinel{msg: "agent is gone", parent: protocol.ErrUnknownAgent}
	// ErrAgentNotActive: tasks launched on an agent that is draining,
	// unreachable or gone. It matches protocol.ErrUnavailable.
	ErrAgentNotActive error = &sentinel{msg: "agent is not active", parent: protocol.ErrUnavailable}
)

// sentinel is an error with a fixed message that may wrap a parent
// sentinel, so that a more specific error still matches the general one.
type sentinel struct {
	msg    string
	parent error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.parent }
