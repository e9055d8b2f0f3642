package executor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
)

// ingressAsker is the sending side of the shuffle ingress
// (shuffle_ingress.go): before each chunk of a transfer it asks the
// receiving agent's ingress for it. A receiver that paces nothing has no
// ingress to ask (errNoIngress); it is not asked again for
// ingressRecheck. A receiver that does not answer within ingressAskTimeout,
// or answers with an error, lets the chunk go unpaced: a transfer is never
// held for an agent that is gone.
type ingressAsker struct {
	self func() protocol.AgentID // "" before the agent registered
	// ask sends an encoded IngressRequest to dst's ingress and returns
	// the encoded reply, or errNoIngress when dst has none; tell sends one
	// that needs no reply.
	ask  func(ctx context.Context, dst protocol.AgentID, data []byte) ([]byte, error)
	tell func(dst protocol.AgentID, data []byte) error
	// local is this agent's own ingress (nil without), for its own
	// tasks' fetches from its own file server.
	local *ingressServer
	log   hclog.Logger

	mu      sync.Mutex
	unpaced map[protocol.AgentID]time.Time // receiver -> not asked until
	swept   time.Time                      // when skip last forgot the expired

	failed atomic.Int64 // chunks let go unasked after a failed ask
}

// errNoIngress says a receiver paces nothing: nobody answers on its
// ingress subject.
var errNoIngress = errors.New("no shuffle ingress")

// ingressAskTimeout stays under the two minutes for which NATS lets an
// agent answer a request it received (natsauth's response permission).
const (
	ingressRecheck    = 10 * time.Second
	ingressAskTimeout = time.Minute
)

func newIngressAsker(local *ingressServer, log hclog.Logger) *ingressAsker {
	return &ingressAsker{self: func() protocol.AgentID { return "" }, local: local, log: log,
		unpaced: map[protocol.AgentID]time.Time{}}
}

// wait asks t's receiver for the next n bytes of transfer seq and waits
// for its grant. asked says the receiver was asked (and must be told when
// the transfer ends). It fails only when ctx ends or the local ingress
// stops.
func (c *ingressAsker) wait(ctx context.Context, t files.Transfer, seq uint64, n int) (asked bool, err error) {
	self, dst := c.self(), protocol.AgentID(t.Dst)
	if self == "" || dst == "" {
		return false, nil
	}
	req := protocol.IngressRequest{FrameworkID: protocol.FrameworkID(t.Framework), CoflowID: t.Coflow,
		Src: self, Dst: dst, Transfer: seq, Bytes: n}
	if dst == self {
		if c.local == nil {
			return false, nil
		}
		return true, c.local.grant(ctx, &req)
	}
	if c.ask == nil || c.skipped(dst) {
		return false, nil
	}
	data, err := protocol.Encode(protocol.MsgIngressRequest, req)
	if err != nil {
		return false, nil // an invalid transfer asks nothing; the gate checked its IDs
	}
	actx, cancel := context.WithTimeout(ctx, ingressAskTimeout)
	defer cancel()
	reply, err := c.ask(actx, dst, data)
	if err == nil {
		err = protocol.DecodeReply(reply, nil)
	}
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return true, ctx.Err()
	case errors.Is(err, errNoIngress):
		c.skip(dst)
		return false, nil
	}
	c.failed.Add(1)
	c.skip(dst)
	c.log.Warn("shuffle ingress did not grant a chunk; sending it unpaced", "dst", dst, "error", err)
	return true, nil
}

// done tells the receiver a transfer it was asked for has ended.
func (c *ingressAsker) done(t files.Transfer, seq uint64) {
	self, dst := c.self(), protocol.AgentID(t.Dst)
	if dst == self {
		if c.local != nil {
			c.local.end(self, seq)
		}
		return
	}
	data, err := protocol.Encode(protocol.MsgIngressRequest, protocol.IngressRequest{
		FrameworkID: protocol.FrameworkID(t.Framework), CoflowID: t.Coflow, Src: self, Dst: dst, Transfer: seq, Done: true})
	if err != nil || c.tell == nil {
		return
	}
	if err := c.tell(dst, data); err != nil {
		c.log.Debug("tell shuffle ingress a transfer ended", "dst", dst, "error", err)
	}
}

func (c *ingressAsker) skipped(dst protocol.AgentID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.unpaced[dst]
	if ok && time.Now().After(until) {
		delete(c.unpaced, dst)
		return false
	}
	return ok
}

// unpacedSweepAt is how many receivers skipped at once make skip forget
// the ones whose pause is over: the receiver a download names is the
// fetching task's word, so a tenant naming agents that do not exist must
// not grow the map for ever.
const unpacedSweepAt = 1024

func (c *ingressAsker) skip(dst protocol.AgentID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	// Swept at most once a pause: a scan per skip would cost a tenant
	// naming thousands of agents the map's length each time.
	if len(c.unpaced) >= unpacedSweepAt && now.After(c.swept.Add(ingressRecheck)) {
		c.swept = now
		for d, until := range c.unpaced {
			if now.After(until) {
				delete(c.unpaced, d)
			}
		}
	}
	c.unpaced[dst] = now.Add(ingressRecheck)
}
