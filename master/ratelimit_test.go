package master

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// TestRateLimit: each principal has its own bucket; a call over it is
// refused with ErrRateLimited and changes nothing.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, func(c *Config) { c.FrameworkRateLimit = RateLimit{QPS: 0.001, Burst: 2} })
	call := func(verb protocol.FrameworkVerb, body, into any) error {
		t.Helper()
		return frameworkCall(t, nc, verb, nats.Header{}, body, into)
	}
	var fw protocol.SubscribeReply
	if err := call(protocol.VerbSubscribe, protocol.SubscribeRequest{Name: "f", Role: "eng", Principal: "a", Suppressed: true}, &fw); err != nil {
		t.Fatal(err)
	}
	if err := call(protocol.VerbRevive, protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(protocol.VerbSuppress, protocol.SuppressRequest{FrameworkID: fw.FrameworkID}, nil); !errors.Is(err, protocol.ErrRateLimited) {
		t.Fatalf("third call of principal a: %v, want ErrRateLimited", err)
	}
	if f, _ := m.View().Framework(fw.FrameworkID); f.Suppressed {
		t.Fatal("a rate-limited suppress suppressed the framework")
	}
	if err := call(protocol.VerbSubscribe, protocol.SubscribeRequest{Name: "g", Role: "eng", Principal: "b"}, nil); err != nil {
		t.Fatalf("principal b's first call: %v", err)
	}
}

func TestPrincipalLimiter_bounded(t *testing.T) {
	t.Parallel()
	p := newPrincipalLimiter(RateLimit{QPS: 0.001, Burst: 1})
	if !p.allow("x") || p.allow("x") {
		t.Fatal("a burst of 1 did not allow exactly one call")
	}
	for i := range maxLimiters + 10 {
		p.allow(string(rune('a'+i%26)) + string(rune(i)))
	}
	if n := len(p.byKey); n > maxLimiters {
		t.Fatalf("%d buckets kept, want at most %d", n, maxLimiters)
	}
	var none *principalLimiter
	if !none.allow("x") || !newPrincipalLimiter(RateLimit{}).allow("x") {
		t.Fatal("no limit refused a call")
	}
}
