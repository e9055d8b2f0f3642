package natsclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Requester sends protocol requests to the leader over NATS: one attempt
// (Once), or attempts with backoff until one succeeds or fails for good
// (Retry).
type Requester struct {
	Conn *nats.Conn
	// Attempt bounds one attempt.
	Attempt time.Duration
	// Backoff between attempts doubles from BackoffMin up to BackoffMax,
	// each wait drawn from [d/2, d) so that clients spread out after a
	// leader change.
	BackoffMin, BackoffMax time.Duration
	// Retryable reports the errors a later attempt may not meet
	// (Retryable by default).
	Retryable func(error) bool
}

// Once sends one request on subject and decodes the reply into into (nil
// for none). Errors are the reply's typed error (errors.Is works with the
// protocol sentinels), nats.ErrNoResponders when no leader listens, or a
// timeout.
func (r Requester) Once(ctx context.Context, subject string, t protocol.MsgType, body, into any) error {
	data, err := protocol.Encode(t, body)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, r.Attempt)
	defer cancel()
	msg, err := r.Conn.RequestWithContext(actx, subject, data)
	if err != nil {
		return err
	}
	return protocol.DecodeReply(msg.Data, into)
}

// Retry sends a request until it succeeds, fails with an error retrying
// cannot fix, or ctx is done; a stop, even mid-attempt, is reported as
// ctx's error wrapping the last attempt's. Use it only for requests that
// are safe to repeat.
func (r Requester) Retry(ctx context.Context, subject string, t protocol.MsgType, body, into any) error {
	retryable := r.Retryable
	if retryable == nil {
		retryable = Retryable
	}
	wait := max(r.BackoffMin, time.Millisecond)
	for {
		err := r.Once(ctx, subject, t, body, into)
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("%s: %w (last error: %w)", subject, ctx.Err(), err)
		}
		if err == nil || !retryable(err) {
			return err
		}
		timer := time.NewTimer(wait/2 + rand.N(wait/2))
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%s: %w (last error: %w)", subject, ctx.Err(), err)
		case <-timer.C:
		}
		wait = min(2*wait, max(r.BackoffMax, wait))
	}
}

// Retryable reports errors a later attempt may not meet: nobody leads right
// now, the leader changed, the connection is reconnecting, the request
// timed out, or the leader asked the caller to slow down.
func Retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, protocol.ErrNotLeader) || errors.Is(err, protocol.ErrUnavailable) ||
		errors.Is(err, protocol.ErrTimeout) || errors.Is(err, protocol.ErrRateLimited) ||
		errors.Is(err, protocol.ErrLimitExceeded)
}
