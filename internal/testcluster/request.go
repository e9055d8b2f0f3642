package testcluster

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
// backoffMax, each wait drawn from [d/2, d) so clients spread out.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = 250 * time.Millisecond
)

// requester sends protocol requests to the leader over NATS.
type requester struct {
	nc *nats.Conn
	// timeout bounds one attempt.
	timeout time.Duration
}

// once sends one request and decodes the reply into into (nil for none).
// Errors are the reply's typed error (errors.Is works with the protocol
// sentinels), nats.ErrNoResponders when no leader listens, or
// context.DeadlineExceeded when no reply came in time.
func (r requester) once(ctx context.Context, subject string, t protocol.MsgType, body, into any) error {
	data, err := protocol.Encode(t, body)
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

// retry sends a request until it succeeds, fails with an error that
// retrying cannot fix, or ctx is done. Use it only for requests that are
// safe to repeat.
func (r requester) retry(ctx context.Context, subject string, t protocol.MsgType, body, into any) error {
	wait := backoffMin
	for {
		err := r.once(ctx, subject, t, body, into)
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
		wait = min(2*wait, backoffMax)
	}
}

// retryable reports errors that a later attempt may not meet: nobody
// leads right now, the leader changed, or the request timed out.
func retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, protocol.ErrNotLeader) ||
		errors.Is(err, protocol.ErrUnavailable) || errors.Is(err, protocol.ErrTimeout)
}

// ambiguous reports errors after which a non-idempotent request may or
// may not have taken effect: the leader may have committed it and then
// failed to answer.
func ambiguous(err error) bool {
	return !errors.Is(err, nats.ErrNoResponders) && retryable(err)
}

// Request sends one API request on nc and decodes the reply into into (nil
// for none), retrying with backoff while no leader answers (no responders,
// not the leader, timeouts), until ctx is done. Each attempt waits at most
// attempt. For requests that are safe to repeat.
func Request(ctx context.Context, nc *nats.Conn, attempt time.Duration, subject string, t protocol.MsgType, body, into any) error {
	return requester{nc: nc, timeout: attempt}.retry(ctx, subject, t, body, into)
}
