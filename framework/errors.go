package framework

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Errors returned by the driver and the gang helper. Errors the master
// returns keep their wire code: test them with errors.Is against the
// protocol sentinels (protocol.ErrUnknownOffer, protocol.ErrNotLeader,
// protocol.ErrUnknownFramework, ...).
var (
	// ErrNotRunning: the call needs a subscribed framework, and the driver
	// has not subscribed yet or its Run has returned.
	ErrNotRunning = errors.New("framework driver not running")
	// ErrClosed: the driver's Run has returned; a driver runs once.
	ErrClosed = errors.New("framework driver closed")
	// ErrAmbiguous: an accept got no answer (timeout, leadership moved
	// while committing). It may or may not have committed; the driver
	// reconciles the tasks it named, and their status updates settle it.
	ErrAmbiguous = errors.New("accept outcome unknown")
	// ErrGangTimeout: a gang found no placement before its deadline and
	// released every offer it held.
	ErrGangTimeout = errors.New("gang placement timed out")
	// ErrGangLaunch: a gang had a placement but one of its per-agent
	// launches failed; the tasks launched on other agents were killed.
	ErrGangLaunch = errors.New("gang launch failed")
	// ErrGangCanceled: the gang was canceled before it launched (or, with
	// GangSpec.Relaunch, while it watched its members), or its driver
	// stopped.
	ErrGangCanceled = errors.New("gang canceled")
	// ErrGangLost: a gang with GangSpec.Relaunch lost a member (it ended
	// other than FINISHED, or the master warned it would preempt it) when
	// no relaunch was left; its other members were killed.
	ErrGangLost = errors.New("gang lost")
	// ErrInvalidSpec: a gang specification or an option is unusable.
	ErrInvalidSpec = errors.New("invalid specification")
)

// retryable reports errors a later attempt of an idempotent request may
// not meet: nobody leads right now, the leader changed, or the request
// timed out.
func retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, protocol.ErrNotLeader) ||
		errors.Is(err, protocol.ErrUnavailable) || errors.Is(err, protocol.ErrTimeout) ||
		errors.Is(err, protocol.ErrRateLimited) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// ambiguous reports errors after which a request that is not idempotent
// may or may not have taken effect: the leader may have committed it and
// then failed to answer. "No responders" is not one: nobody received it;
// nor is a rate limit: the leader refused the call before acting on it;
// nor is "not the leader": the node answering had stopped leading and
// proposed nothing (a leader that lost leadership after proposing answers
// ErrUnavailable).
func ambiguous(err error) bool {
	return !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, protocol.ErrRateLimited) &&
		!errors.Is(err, protocol.ErrNotLeader) && retryable(err)
}

// launchedNothing reports a refused accept that launched nothing and
// whose offers are gone: stale offers, or no leader to take it.
func launchedNothing(err error) bool {
	return isUnknownOffer(err) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, protocol.ErrNotLeader)
}
