package framework

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// requestBackoff spaces the attempts of a retried request.
var requestBackoff = Backoff{Min: 10 * time.Millisecond, Max: 500 * time.Millisecond}

// requester sends API requests to the leader.
type requester struct {
	nc   *nats.Conn
	subj protocol.Subjects
	// timeout bounds one attempt.
	timeout time.Duration
	// session, when set and not 0, goes with every call
	// (protocol.SessionHeader).
	session *atomic.Uint64
	// principal is the principal the framework acts as: its calls go on
	// that principal's subjects, the only ones its NATS connection may
	// use where the cluster authenticates connections.
	principal string
	// news, when set, cuts a retry's wait short when a new leader
	// announces itself.
	news *leaderNews
}

// once sends one request on the verb's subject and decodes the reply into
// into (nil for none). Errors are the reply's typed error (errors.Is works
// with the protocol sentinels), nats.ErrNoResponders when no leader
// listens, or context.DeadlineExceeded when no reply came within the
// attempt's timeout.
func (r requester) once(ctx context.Context, verb protocol.FrameworkVerb, body, into any) error {
	t, _ := verb.RequestType()
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
	out := &nats.Msg{Subject: subject, Data: data}
	if r.session != nil {
		if s := r.session.Load(); s != 0 {
			setHeader(out, protocol.SessionHeader, protocol.FormatSession(s))
		}
	}
	msg, err := r.nc.RequestMsgWithContext(actx, out)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return err
	}
	return protocol.DecodeReply(msg.Data, into)
}

func setHeader(msg *nats.Msg, key, value string) {
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	msg.Header.Set(key, value)
}

// retry sends a request until it succeeds, fails with an error retrying
// cannot fix, or ctx ends. Use it only for requests that are safe to
// repeat. accept, when set, may turn the error of a repeated attempt into
// success (e.g. "unknown offer" for a decline whose first attempt
// succeeded unanswered).
func (r requester) retry(ctx context.Context, verb protocol.FrameworkVerb, body, into any, accept func(error) bool) error {
	return retryAttempts(ctx, func() error { return r.once(ctx, verb, body, into) }, accept, r.news.next,
		func(err error) error { return fmt.Errorf("%s: %w (last error: %w)", verb, ctx.Err(), err) })
}

// retryAttempts runs attempt until it succeeds, fails in a way retrying
// cannot fix, or ctx ends (then returns ended(the last error)), waiting
// requestBackoff between attempts; a new leader heard of (news) ends a wait
// and starts the back-off over.
func retryAttempts(ctx context.Context, attempt func() error, accept func(error) bool,
	news func() <-chan struct{}, ended func(error) error) error {
	step := 0
	for n := 0; ; n++ {
		woken := news()
		err := attempt()
		if err != nil && n > 0 && accept != nil && accept(err) {
			return nil
		}
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return err
		}
		if !sleepUnlessWoken(ctx.Done(), woken, requestBackoff.Delay(step)) {
			return ended(err)
		}
		step++
		select {
		case <-woken:
			step = 0
		default:
		}
	}
}

// isUnknownOffer reports the error of a decline repeated after its offers
// were already gone.
func isUnknownOffer(err error) bool {
	return errors.Is(err, protocol.ErrUnknownOffer) || errors.Is(err, protocol.ErrOfferRescinded)
}
