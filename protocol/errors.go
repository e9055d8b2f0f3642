package protocol

import (
	"errors"
	"fmt"
)

// Code identifies an error class on the wire. Codes are never renumbered.
type Code uint16

// Error codes carried in replies and error events.
const (
	CodeOK                 Code = 0
	CodeInternal           Code = 1
	CodeMalformed          Code = 2
	CodeUnsupportedVersion Code = 3
	CodeUnknownType        Code = 4
	CodeTooLarge           Code = 5
	CodeInvalidArgument    Code = 6
	CodeUnauthorized       Code = 7
	CodeNotLeader          Code = 8
	CodeUnknownFramework   Code = 9
	CodeUnknownAgent       Code = 10
	CodeUnknownOffer       Code = 11
	CodeUnknownTask        Code = 12
	CodeOfferRescinded     Code = 13
	CodeOfferMismatch      Code = 14
	CodeInsufficient       Code = 15
	CodeInvalidResources   Code = 16
	CodeInvalidConstraint  Code = 17
	CodeConstraintViolated Code = 18
	CodeUnknownRole        Code = 19
	CodeDuplicate          Code = 20
	CodeTimeout            Code = 21
	CodeUnavailable        Code = 22
	CodeFailedOver         Code = 23
	CodeRateLimited        Code = 24
	CodeLimitExceeded      Code = 25
	CodeNotPreemptible     Code = 26
	CodeConflict           Code = 27
)

// Sentinel errors, one per code. errors.Is matches them against errors that
// crossed the wire as a code (see Error).
var (
	ErrInternal           = &Error{Code: CodeInternal, Message: "internal error"}
	ErrMalformed          = &Error{Code: CodeMalformed, Message: "malformed message"}
	ErrUnsupportedVersion = &Error{Code: CodeUnsupportedVersion, Message: "unsupported protocol version"}
	ErrUnknownType        = &Error{Code: CodeUnknownType, Message: "unknown message type"}
	ErrTooLarge           = &Error{Code: CodeTooLarge, Message: "message too large"}
	ErrInvalidArgument    = &Error{Code: CodeInvalidArgument, Message: "invalid argument"}
	ErrUnauthorized       = &Error{Code: CodeUnauthorized, Message: "unauthorized"}
	ErrNotLeader          = &Error{Code: CodeNotLeader, Message: "not the leader"}
	ErrUnknownFramework   = &Error{Code: CodeUnknownFramework, Message: "unknown framework"}
	ErrUnknownAgent       = &Error{Code: CodeUnknownAgent, Message: "unknown agent"}
	ErrUnknownOffer       = &Error{Code: CodeUnknownOffer, Message: "unknown offer"}
	ErrUnknownTask        = &Error{Code: CodeUnknownTask, Message: "unknown task"}
	ErrOfferRescinded     = &Error{Code: CodeOfferRescinded, Message: "offer rescinded"}
	ErrOfferMismatch      = &Error{Code: CodeOfferMismatch, Message: "offers do not match"}
	ErrInsufficient       = &Error{Code: CodeInsufficient, Message: "insufficient resources"}
	ErrInvalidResources   = &Error{Code: CodeInvalidResources, Message: "invalid resources"}
	ErrInvalidConstraint  = &Error{Code: CodeInvalidConstraint, Message: "invalid constraint"}
	ErrConstraintViolated = &Error{Code: CodeConstraintViolated, Message: "constraint violated"}
	ErrUnknownRole        = &Error{Code: CodeUnknownRole, Message: "unknown role"}
	ErrDuplicate          = &Error{Code: CodeDuplicate, Message: "duplicate"}
	ErrTimeout            = &Error{Code: CodeTimeout, Message: "timed out"}
	ErrUnavailable        = &Error{Code: CodeUnavailable, Message: "unavailable"}
	// ErrFailedOver: another scheduler took the framework over; the
	// caller's session is no longer the framework's (see SessionHeader).
	ErrFailedOver = &Error{Code: CodeFailedOver, Message: "framework failed over to another scheduler"}
	// ErrRateLimited: the caller's principal sent more calls than the
	// master's rate limit allows; the call was not applied.
	ErrRateLimited = &Error{Code: CodeRateLimited, Message: "rate limited"}
	// ErrLimitExceeded: a configured cap refused the call (an agent
	// credential that holds as many registered agents as it may); it may
	// succeed once something under the cap is released.
	ErrLimitExceeded = &Error{Code: CodeLimitExceeded, Message: "limit exceeded"}
	// ErrNotPreemptible: the task is marked non-preemptible, or may not be
	// marked so (its role's guarantee does not cover it).
	ErrNotPreemptible = &Error{Code: CodeNotPreemptible, Message: "not preemptible"}
	// ErrConflict: a conditional write found another revision than it was
	// made for (a store entry written or deleted in between); nothing was
	// written.
	ErrConflict = &Error{Code: CodeConflict, Message: "conflict"}
)

var sentinels = map[Code]*Error{}

func init() {
	for _, e := range []*Error{
		ErrInternal, ErrMalformed, ErrUnsupportedVersion, ErrUnknownType, ErrTooLarge,
		ErrInvalidArgument, ErrUnauthorized, ErrNotLeader, ErrUnknownFramework,
		ErrUnknownAgent, ErrUnknownOffer, ErrUnknownTask, ErrOfferRescinded,
		ErrOfferMismatch, ErrInsufficient, ErrInvalidResources, ErrInvalidConstraint,
		ErrConstraintViolated, ErrUnknownRole, ErrDuplicate, ErrTimeout, ErrUnavailable,
		ErrFailedOver, ErrRateLimited, ErrLimitExceeded, ErrNotPreemptible, ErrConflict,
	} {
		sentinels[e.Code] = e
	}
}

// Error is an error with a wire code. It is both the sentinel type and the
// shape of an error that arrived over the wire; two Errors match under
// errors.Is when their codes are equal.
type Error struct {
	Code    Code   `msgpack:"code" json:"code"`
	Message string `msgpack:"message" json:"message"`
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Is matches any *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// CodeOf returns the wire code for err: the code of the first *Error in its
// chain, CodeOK for nil, CodeInternal otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ToWire turns err into the {code, message} carried in replies; nil stays nil.
// The message is the full wrapped text, so context survives the trip.
func ToWire(err error) *Error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeOf(err), Message: err.Error()}
}

// FromWire rebuilds a typed error from a reply's {code, message}: the result
// wraps the code's sentinel, so errors.Is(err, ErrUnknownOffer) works on the
// receiving side. A nil or OK error gives nil.
func FromWire(e *Error) error {
	if e == nil || e.Code == CodeOK {
		return nil
	}
	s, ok := sentinels[e.Code]
	if !ok {
		return &Error{Code: e.Code, Message: e.Message}
	}
	return &remoteError{msg: e.Message, code: s}
}

// remoteError keeps the sender's full message while unwrapping to the
// code's sentinel.
type remoteError struct {
	msg  string
	code *Error
}

func (r *remoteError) Error() string { return r.msg }
func (r *remoteError) Unwrap() error { return r.code }

// Errorf wraps a sentinel with context, like fmt.Errorf with %w; it exists so
// callers in this package's style read as protocol.Errorf(ErrX, "...").
func Errorf(sentinel *Error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sentinel)
}
