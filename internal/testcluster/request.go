package testcluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/simagent"
	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// requester sends protocol requests to the leader over NATS with the
// test clients' retry policy (simagent.NewRequester).
type requester struct{ natsclient.Requester }

// newRequester is a requester on nc whose attempts last at most attempt.
func newRequester(nc *nats.Conn, attempt time.Duration) requester {
	return requester{simagent.NewRequester(nc, attempt)}
}

// retryable is the test clients' retry policy (simagent.Retryable).
func retryable(err error) bool { return simagent.Retryable(err) }

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
	return newRequester(nc, attempt).Retry(ctx, subject, t, body, into)
}
