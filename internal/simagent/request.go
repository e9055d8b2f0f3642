package simagent

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// Retry backoff between attempts: doubling from backoffMin, capped at
// backoffMax, each wait drawn from [d/2, d) so clients spread out.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = 250 * time.Millisecond
)

// requester sends protocol requests to the leader over NATS: the clients'
// loop (natsclient.Requester) with a narrower idea of what to retry, so
// that rate limits and exceeded limits show as the master sent them.
type requester struct{ natsclient.Requester }

// newRequester is a requester on nc whose attempts last at most attempt.
func newRequester(nc *nats.Conn, attempt time.Duration) requester {
	return requester{natsclient.Requester{Conn: nc, Attempt: attempt, BackoffMin: backoffMin,
		BackoffMax: backoffMax, Retryable: retryable}}
}

// retryable reports errors that a later attempt may not meet: nobody
// leads right now, the leader changed, or the request timed out.
func retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, protocol.ErrNotLeader) ||
		errors.Is(err, protocol.ErrUnavailable) || errors.Is(err, protocol.ErrTimeout)
}
