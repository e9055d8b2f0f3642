package master

import (
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// caller is who a framework call acts for, resolved once per call for the
// checks that run before its handler (authentication, rate limits,
// fencing): the principal, and the framework for calls other than
// subscribe.
type caller struct {
	principal string
	fw        *state.Framework // nil for a subscribe
	// known is false for a call about a framework the master does not
	// know: no check applies, its handler says so.
	known bool
}

// callerOf resolves a framework call's caller: a subscribe acts as the
// principal it names, any other call as the principal its framework
// registered with.
func (l *leader) callerOf(body any) caller {
	if r, ok := body.(*protocol.SubscribeRequest); ok {
		return caller{principal: r.Principal, known: true}
	}
	id, ok := frameworkIDOf(body)
	if !ok {
		return caller{}
	}
	f, known := l.m.View().Framework(id)
	if !known {
		return caller{}
	}
	return caller{principal: f.Principal, fw: f, known: true}
}

// frameworkIDOf is the framework a framework call other than subscribe is
// made for.
func frameworkIDOf(body any) (protocol.FrameworkID, bool) {
	switch r := body.(type) {
	case *protocol.TeardownRequest:
		return r.FrameworkID, true
	case *protocol.AcceptRequest:
		return r.FrameworkID, true
	case *protocol.DeclineRequest:
		return r.FrameworkID, true
	case *protocol.SuppressRequest:
		return r.FrameworkID, true
	case *protocol.ReviveRequest:
		return r.FrameworkID, true
	case *protocol.KillRequest:
		return r.FrameworkID, true
	case *protocol.ReconcileRequest:
		return r.FrameworkID, true
	case *protocol.AcknowledgeRequest:
		return r.FrameworkID, true
	case *protocol.DemandRequest:
		return r.FrameworkID, true
	case *protocol.CoflowRegisterRequest:
		return r.FrameworkID, true
	}
	return "", false
}
