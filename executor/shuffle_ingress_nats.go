package executor

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// This file carries the shuffle ingress over NATS: the agent asks other
// agents' ingress for chunks (ingressAsker's ask and tell) and, with an
// ingress capacity, answers on its own subject.

// askIngress sends a request to dst's ingress and returns its reply.
func (a *Agent) askIngress(ctx context.Context, dst protocol.AgentID, data []byte) ([]byte, error) {
	subject, err := a.subj.ShuffleIngress(dst)
	if err != nil {
		return nil, errNoIngress // an ID no subject can name has no ingress
	}
	a.mu.Lock()
	nc := a.nc
	a.mu.Unlock()
	if nc == nil {
		return nil, errNoIngress
	}
	m, err := nc.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, errNoIngress
	}
	if err != nil {
		return nil, err
	}
	return m.Data, nil
}

// tellIngress sends dst's ingress a message that needs no reply.
func (a *Agent) tellIngress(dst protocol.AgentID, data []byte) error {
	subject, err := a.subj.ShuffleIngress(dst)
	if err != nil {
		return err
	}
	a.mu.Lock()
	nc := a.nc
	a.mu.Unlock()
	if nc == nil {
		return errNoIngress
	}
	return nc.Publish(subject, data)
}

// subscribeIngress answers on the agent's ingress subject, when it has an
// ingress capacity, replacing the subscription of an earlier ID.
func (a *Agent) subscribeIngress(ctx context.Context, id protocol.AgentID) error {
	if a.shuffle.ingress == nil {
		return nil
	}
	subject, err := a.subj.ShuffleIngress(id)
	if err != nil {
		return err
	}
	return a.resubscribe(&a.ingressSub, subject, func(m *nats.Msg) { a.onIngress(ctx, id, m) })
}

// onIngress answers one request: at once when it is bad, once the port
// grants it otherwise. A request that says its transfer ended gets no
// answer.
func (a *Agent) onIngress(ctx context.Context, self protocol.AgentID, m *nats.Msg) {
	var req protocol.IngressRequest
	err := decodeIngress(m.Data, &req)
	if err == nil && req.Dst != self {
		err = protocol.Errorf(protocol.ErrInvalidArgument, "ingress of %s asked for %s", self, req.Dst)
	}
	if err != nil {
		a.shuffle.counters.ingressRefused.Add(1)
		a.log.Warn("bad shuffle ingress request", "subject", m.Subject, "error", err)
		a.respond(m, nil, err)
		return
	}
	if req.Done {
		a.shuffle.ingress.end(req.Src, req.Transfer)
		return
	}
	// The grant may take as long as better transfers keep the port: it is
	// waited for off the subscription's goroutine.
	a.wg.Go(func() {
		wctx, cancel := context.WithTimeout(ctx, ingressAskTimeout)
		defer cancel()
		a.respond(m, nil, a.shuffle.ingress.grant(wctx, &req))
	})
}

// decodeIngress decodes and validates an IngressRequest.
func decodeIngress(data []byte, req *protocol.IngressRequest) error {
	if limit := protocol.MaxRequestSize(protocol.MsgIngressRequest); len(data) > limit {
		return protocol.Errorf(protocol.ErrTooLarge, "%d bytes, the most is %d", len(data), limit)
	}
	env, err := protocol.Decode(data)
	if err != nil {
		return err
	}
	if env.Type != protocol.MsgIngressRequest {
		return protocol.Errorf(protocol.ErrMalformed, "a %s on the shuffle ingress", env.Type)
	}
	if err := protocol.DecodeBody(env, req); err != nil {
		return err
	}
	return req.Validate()
}

// respond answers a request (one with a reply subject) with body or err.
func (a *Agent) respond(m *nats.Msg, body any, err error) {
	if m.Reply == "" {
		return
	}
	data, encErr := protocol.EncodeReply(body, err)
	if encErr != nil {
		data, _ = protocol.EncodeReply(nil, encErr)
	}
	if err := m.Respond(data); err != nil {
		a.log.Debug("answer a request", "subject", m.Subject, "error", err)
	}
}
