package protocol

import "reflect"

// NewBody returns a pointer to a zero value of the struct that type t
// carries, e.g. *AcceptRequest for MsgAcceptRequest, or false when t is not
// a known type.
func NewBody(t MsgType) (any, bool) {
	f, ok := registry[t]
	if !ok {
		return nil, false
	}
	return f(), true
}

// TypeOf returns the message type whose body is body's struct type; body
// may be the struct or a pointer to it. It returns false for anything else.
func TypeOf(body any) (MsgType, bool) {
	rt := reflect.TypeOf(body)
	if rt == nil {
		return 0, false
	}
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	t, ok := typeByGo[rt]
	return t, ok
}
