package master

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// validator is what every request body implements.
type validator interface{ Validate() error }

// dispatch answers one API request. It runs on the subscription's
// goroutine, so it hands the work to a bounded pool (work: one per lane)
// and returns at once; every request gets a reply with a typed error
// code, and no input can panic the master.
func (l *leader) dispatch(work chan struct{}, msg *nats.Msg) {
	select {
	case work <- struct{}{}:
	case <-l.done:
		return
	}
	// A message delivered while stop runs must not add to the wait group
	// once stop waits on it.
	l.stopMu.RLock()
	if l.stopping {
		l.stopMu.RUnlock()
		<-work
		return
	}
	l.wg.Add(1)
	l.stopMu.RUnlock()
	go func() {
		defer l.wg.Done()
		defer func() { <-work }()
		body, err := l.serve(msg)
		// Counted before the reply, so a client that got its answer
		// finds the request in /metrics.
		l.metrics.request(l.subj, msg.Subject, err)
		l.reply(msg, body, err)
	}()
}

// serve answers one request. Everything that can be decided from the
// subject and headers (who calls, for which framework or agent, within its
// rate, in its session, within the size of its request type) is decided
// before the body is decoded, so a caller that may not make the call costs
// the master no decoding.
func (l *leader) serve(msg *nats.Msg) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			l.logger.Error("request handler panicked", "subject", msg.Subject, "panic", fmt.Sprint(r))
			result, err = nil, fmt.Errorf("%w: request failed", protocol.ErrInternal)
		}
	}()
	api, ok := l.subj.ParseAPI(msg.Subject)
	if !ok {
		return nil, fmt.Errorf("%w: subject %q", protocol.ErrUnknownType, clipText(msg.Subject))
	}
	want, _ := api.RequestType()
	c, err := l.identify(api)
	if err != nil {
		l.logger.Warn("call refused", "subject", msg.Subject, "error", err)
		return nil, err
	}
	if err := l.rateLimit(c); err != nil {
		l.logger.Debug("call over its rate refused", "subject", msg.Subject, "error", err)
		return nil, err
	}
	if err := l.fence(msg, c); err != nil {
		l.logger.Info("call from a scheduler that was taken over refused", "subject", msg.Subject, "error", err)
		return nil, err
	}
	if n, limit := len(msg.Data), protocol.MaxRequestSize(want); n > limit {
		return nil, fmt.Errorf("%w: %s request of %d bytes, limit %d", protocol.ErrTooLarge, api.Verb, n, limit)
	}
	env, err := protocol.Decode(msg.Data)
	if err != nil {
		return nil, err
	}
	if env.Type != want {
		return nil, fmt.Errorf("%w: %s on the %s subject", protocol.ErrInvalidArgument, env.Type, api.Verb)
	}
	body, _ := protocol.NewBody(env.Type)
	if err := protocol.DecodeBody(env, body); err != nil {
		return nil, err
	}
	if v, ok := body.(validator); ok {
		if err := v.Validate(); err != nil {
			if a, ok := body.(*protocol.AcceptRequest); ok && c.fw != nil && a.FrameworkID == c.fw.ID {
				l.refuseLaunch(a, err)
			}
			return nil, err
		}
	}
	if err := c.owns(body); err != nil {
		l.logger.Warn("call refused", "subject", msg.Subject, "error", err)
		return nil, err
	}
	ctx, cancel := l.timed()
	defer cancel()
	result, err = l.handle(ctx, c, body)
	if err != nil {
		l.logger.Debug("request refused", "subject", msg.Subject, "error", err)
	}
	return result, err
}

// handle runs the handler for a decoded, validated request.
func (l *leader) handle(ctx context.Context, c caller, body any) (any, error) {
	switch r := body.(type) {
	case *protocol.SubscribeRequest:
		return l.subscribe(ctx, r)
	case *protocol.TeardownRequest:
		return nil, l.teardown(ctx, r.FrameworkID)
	case *protocol.AcceptRequest:
		return nil, l.accept(ctx, r)
	case *protocol.DeclineRequest:
		return nil, l.declineCounted(r)
	case *protocol.SuppressRequest:
		return nil, l.setSuppressed(ctx, r.FrameworkID, true)
	case *protocol.ReviveRequest:
		return nil, l.revive(ctx, r)
	case *protocol.KillRequest:
		return nil, l.kill(r)
	case *protocol.ReconcileRequest:
		return nil, l.reconcile(r)
	case *protocol.AcknowledgeRequest:
		return l.acknowledge(ctx, r)
	case *protocol.DemandRequest:
		return nil, l.demand(r)
	case *protocol.RegisterRequest:
		return l.registerAgent(ctx, c.principal, r)
	case *protocol.ReregisterRequest:
		return l.reregisterAgent(ctx, c.principal, r)
	case *protocol.HeartbeatRequest:
		return l.heartbeat(r.AgentID)
	case *protocol.StatusUpdateRequest:
		return l.statusUpdate(ctx, r)
	case *protocol.CoflowRegisterRequest:
		return nil, l.coflowRegister(r)
	case *protocol.CoflowReportRequest:
		return nil, l.coflowReport(r)
	case *protocol.StoreRequest:
		return l.store(ctx, c, r)
	}
	return nil, fmt.Errorf("%w: %T is not handled by this master", protocol.ErrUnknownType, body)
}

func (l *leader) reply(msg *nats.Msg, body any, err error) {
	if msg.Reply == "" {
		return
	}
	data, encErr := protocol.EncodeReply(body, err)
	if encErr != nil {
		data, _ = protocol.EncodeReply(nil, encErr)
	}
	if err := msg.Respond(data); err != nil {
		l.logger.Debug("reply", "subject", msg.Subject, "error", err)
	}
}

// raftError maps a failure to commit into the wire's codes. ErrNotLeader
// says the command was never proposed (this node no longer leads), so a
// client knows it did not apply; leadership lost after the command was
// proposed, or a shutdown, leaves the outcome unknown (ErrUnavailable), as
// does a timeout (ErrTimeout).
func raftError(err error) error {
	switch {
	case errors.Is(err, raftstore.ErrNotLeader):
		return fmt.Errorf("%w: not applied: %v", protocol.ErrNotLeader, err)
	case errors.Is(err, raftstore.ErrLeadershipLost), errors.Is(err, raftstore.ErrShutdown):
		return fmt.Errorf("%w: the outcome is unknown: %v", protocol.ErrUnavailable, err)
	case errors.Is(err, raftstore.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %v", protocol.ErrTimeout, err)
	}
	return fmt.Errorf("%w: %v", protocol.ErrUnavailable, err)
}
