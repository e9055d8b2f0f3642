package executor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Retry backoff between attempts: doubling from backoffMin, capped at
// backoffMax, each wait drawn from [d/2, d) so that agents spread out
// after a leader change.
const (
	backoffMin = 25 * time.Millisecond
	backoffMax = 2 * time.Second
)

// requester sends agent API requests to the leader over NATS.
type requester struct {
	nc   *nats.Conn
	subj protocol.Subjects
	// timeout bounds one attempt.
	timeout time.Duration
	// principal is the agent's credential: its calls go on that
	// credential's subjects.
	principal string
}

// once sends one request on the verb's subject and decodes the reply into
// into (nil for none). Errors are the reply's typed error (errors.Is works
// with the protocol sentinels), nats.ErrNoResponders when no leader
// listens, or a timeout.
func (r requester) once(ctx context.Context, verb protocol.AgentVerb, t protocol.MsgType, body, into any) error {
	data, err := protocol.Encode(t, body)
	if err != nil {
		return err
	}
	subject, err := r.subj.RequestSubject(r.principal, body)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	msg, err := r.nc.RequestWithContext(actx, subject, data)
	if err != nil {
		return err
	}
	return protocol.DecodeReply(msg.Data, into)
}

// retry sends a request until it succeeds, fails with an error retrying
// cannot fix, or ctx is done.
func (r requester) retry(ctx context.Context, verb protocol.AgentVerb, t protocol.MsgType, body, into any) error {
	wait := backoffMin
	for {
		err := r.once(ctx, verb, t, body, into)
		if err != nil && ctx.Err() != nil {
			// Stopped mid-attempt: say so, whatever the attempt met, so
			// Run knows a stop from a failure.
			return fmt.Errorf("%s: %w (last error: %w)", verb, ctx.Err(), err)
		}
		if err == nil || !retryable(err) {
			return err
		}
		timer := time.NewTimer(wait/2 + rand.N(wait/2))
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%s: %w (last error: %w)", verb, ctx.Err(), err)
		case <-timer.C:
		}
		wait = min(2*wait, backoffMax)
	}
}

// retryable reports errors a later attempt may not meet: nobody leads
// right now, the leader changed, the connection is reconnecting, or the
// request timed out.
func retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, protocol.ErrNotLeader) || errors.Is(err, protocol.ErrUnavailable) ||
		errors.Is(err, protocol.ErrTimeout) || errors.Is(err, protocol.ErrRateLimited) ||
		errors.Is(err, protocol.ErrLimitExceeded)
}
