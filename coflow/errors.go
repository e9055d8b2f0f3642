package coflow

import (
	"errors"

	"github.com/allot-project/allot/protocol"
)

// Errors returned by the Coordinator. Event errors wrap a protocol sentinel,
// so errors.Is matches both the coflow sentinel and its wire code once the
// master forwards it to a framework or an agent. A rejected event changes no
// state.
var (
	// ErrUnknownScheduler: Config.Scheduler names no scheduler.
	ErrUnknownScheduler = errors.New("unknown coflow scheduler")
	// ErrUnknownPolicy: Config.Policy is not one of A, B, C, D.
	ErrUnknownPolicy = errors.New("unknown philae ordering policy")
	// ErrInvalidConfig: a Config field is out of range.
	ErrInvalidConfig = wireError("invalid coflow config", protocol.ErrInvalidArgument)
	// ErrUnknownCoflow: an event names a coflow that is not registered.
	ErrUnknownCoflow = wireError("unknown coflow", protocol.ErrInvalidArgument)
	// ErrDuplicateCoflow: Register was called twice with one ID.
	ErrDuplicateCoflow = wireError("duplicate coflow", protocol.ErrDuplicate)
	// ErrDuplicateFlow: a coflow lists one (source, destination) pair twice.
	ErrDuplicateFlow = wireError("duplicate flow", protocol.ErrDuplicate)
	// ErrUnknownFlow: an event names a flow index the coflow does not have.
	ErrUnknownFlow = wireError("unknown flow", protocol.ErrInvalidArgument)
	// ErrFlowFinished: a flow was reported complete twice.
	ErrFlowFinished = wireError("flow already finished", protocol.ErrInvalidArgument)
	// ErrPilotMismatch: a completion's Pilot flag disagrees with the
	// coordinator's pilot set (the sender enforced a stale or foreign schedule).
	ErrPilotMismatch = wireError("pilot flag mismatch", protocol.ErrInvalidArgument)
	// ErrBadPort: a flow names a port outside [0, Config.Ports).
	ErrBadPort = wireError("bad port", protocol.ErrInvalidArgument)
	// ErrBadSpec: a coflow spec is malformed (no ID, no flows, a negative size).
	ErrBadSpec = wireError("bad coflow spec", protocol.ErrInvalidArgument)
	// ErrBadBytes: a byte count is negative or goes backwards.
	ErrBadBytes = wireError("bad byte count", protocol.ErrInvalidArgument)
	// ErrTimeBackwards: an event's time is before an earlier event's.
	ErrTimeBackwards = wireError("time went backwards", protocol.ErrInvalidArgument)
)

// codedError is a sentinel of this package that also matches a protocol
// sentinel, so the wire code survives without a second error in the chain.
type codedError struct {
	msg  string
	wire *protocol.Error
}

func wireError(msg string, wire *protocol.Error) error { return &codedError{msg: msg, wire: wire} }

func (e *codedError) Error() string { return e.msg }

func (e *codedError) Unwrap() error { return e.wire }
