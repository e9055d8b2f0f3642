package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/allot-project/allot/protocol"
)

// Errors of the client. A *StatusError from a master matches the one of
// its status code with errors.Is.
var (
	ErrBadRequest   = errors.New("bad request")                 // 400, or a bad argument to the client
	ErrUnauthorized = errors.New("the operator token is wrong") // 401
	ErrNotFound     = errors.New("not found")                   // 404
	ErrConflict     = errors.New("conflict")                    // 409
	ErrUnavailable  = errors.New("no master could serve it")    // 503, or no master reachable
	// ErrUnknownMaster: a master redirected the call to an address that is
	// not one of the masters the client was given; the client does not
	// follow, so its credentials go nowhere else.
	ErrUnknownMaster = errors.New("redirected to an unknown master")
)

// StatusError is an error answer of a master.
type StatusError struct {
	Code        int
	Method, URL string
	// Message is the master's reason; LeaderID names the leader when a
	// follower could not redirect to it.
	Message  string
	LeaderID string
	// ErrorCode is the protocol code of the leader's typed error, when the
	// answer carried one (Error.Code).
	ErrorCode protocol.Code
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.LeaderID != "" {
		msg += " (leader " + e.LeaderID + ")"
	}
	return msg
}

// Is maps the status code to the client's sentinel errors, and the
// protocol code to protocol's: errors.Is(err, protocol.ErrNotPreemptible)
// holds for a kill the leader refused with it.
func (e *StatusError) Is(target error) bool {
	if pe, ok := target.(*protocol.Error); ok {
		return e.ErrorCode != protocol.CodeOK && pe.Code == e.ErrorCode
	}
	switch e.Code {
	case http.StatusBadRequest:
		return target == ErrBadRequest
	case http.StatusUnauthorized:
		return target == ErrUnauthorized
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusConflict:
		return target == ErrConflict
	case http.StatusServiceUnavailable:
		return target == ErrUnavailable
	}
	return false
}
