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

// NewRequester sends protocol requests on nc to the leader, each attempt
// lasting at most attempt: the clients' loop (natsclient.Requester) with a
// narrower idea of what to retry (Retryable), so that rate limits and
// exceeded limits show as the master sent them. The test cluster's
// frameworks use it too.
func NewRequester(nc *nats.Conn, attempt time.Duration) natsclient.Requester {
	return natsclient.Requester{Conn: nc, Attempt: attempt, BackoffMin: backoffMin,
		BackoffMax: backoffMax, Retryable: Retryable}
}

// Retryable reports errors that a later attempt may not meet: nobody
// leads right now, the leader changed, or the request timed out.
func Retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, protocol.ErrNotLeader) ||
		errors.Is(err, protocol.ErrUnavailable) || errors.Is(err, protocol.ErrTimeout)
}
