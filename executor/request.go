package executor

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// Retry backoff between attempts: doubling from backoffMin, capped at
// backoffMax, so that agents spread out after a leader change.
const (
	backoffMin = 25 * time.Millisecond
	backoffMax = 2 * time.Second
)

// requester sends agent API requests to the leader over NATS, on the
// subjects of the agent's credential.
type requester struct {
	natsclient.Requester
	subj      protocol.Subjects
	principal string
}

// newRequester is a requester on nc whose attempts last at most timeout.
func newRequester(nc *nats.Conn, subj protocol.Subjects, timeout time.Duration, principal string) requester {
	return requester{
		Requester: natsclient.Requester{Conn: nc, Attempt: timeout, BackoffMin: backoffMin, BackoffMax: backoffMax},
		subj:      subj, principal: principal,
	}
}

// once sends one request on the credential's subject (natsclient.Requester.Once).
func (r requester) once(ctx context.Context, t protocol.MsgType, body, into any) error {
	subject, err := r.subj.RequestSubject(r.principal, body)
	if err != nil {
		return err
	}
	return r.Once(ctx, subject, t, body, into)
}

// retry sends a request until it succeeds, fails with an error
// retrying cannot fix, or ctx is done (natsclient.Requester.Retry).
func (r requester) retry(ctx context.Context, t protocol.MsgType, body, into any) error {
	subject, err := r.subj.RequestSubject(r.principal, body)
	if err != nil {
		return err
	}
	return r.Retry(ctx, subject, t, body, into)
}
