package master

import (
	"fmt"
	"sync"

	"golang.org/x/time/rate"

	"github.com/allot-project/allot/protocol"
)

// Per-principal rate limiting of framework calls (Config.FrameworkRateLimit),
// as Mesos's --rate_limits: each principal has a token bucket; a call over
// it is refused with ErrRateLimited before anything is done, and the SDK
// backs off and retries the calls it may repeat.

// RateLimit is a token bucket: QPS calls per second on average, Burst at
// once. A zero QPS means no limit.
type RateLimit struct {
	QPS   float64
	Burst int
}

// maxLimiters bounds the buckets kept; past it they start afresh, so names
// sent by unauthenticated callers cannot grow the map without bound.
const maxLimiters = 4096

// principalLimiter keeps one bucket per principal.
type principalLimiter struct {
	limit RateLimit
	mu    sync.Mutex
	byKey map[string]*rate.Limiter
}

func newPrincipalLimiter(l RateLimit) *principalLimiter {
	return &principalLimiter{limit: l, byKey: map[string]*rate.Limiter{}}
}

// allow takes a token from principal's bucket.
func (p *principalLimiter) allow(principal string) bool {
	if p == nil || p.limit.QPS <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	lim, ok := p.byKey[principal]
	if !ok {
		if len(p.byKey) >= maxLimiters {
			clear(p.byKey)
		}
		lim = rate.NewLimiter(rate.Limit(p.limit.QPS), max(p.limit.Burst, 1))
		p.byKey[principal] = lim
	}
	return lim.Allow()
}

// rateLimit refuses a call over its rate: a framework call over its
// principal's (Config.FrameworkRateLimit), an agent call over its
// credential's (Config.AgentRateLimit; agents of a cluster that
// authenticates none are limited one by one).
func (l *leader) rateLimit(c caller) error {
	switch c.kind {
	case protocol.KindFramework:
		if l.limiter.allow(c.principal) {
			return nil
		}
		return fmt.Errorf("%w: principal %q is over %v calls per second", protocol.ErrRateLimited,
			protocol.PrincipalToken(c.principal), l.cfg.FrameworkRateLimit.QPS)
	case protocol.KindAgent:
		key := c.principal
		if key == "" {
			key = protocol.AnonymousPrincipal + "/" + c.id
		}
		if l.agentLimiter.allow(key) {
			return nil
		}
		return fmt.Errorf("%w: agent credential %q is over %v calls per second", protocol.ErrRateLimited,
			protocol.PrincipalToken(c.principal), l.cfg.AgentRateLimit.QPS)
	}
	return nil
}
