package master

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// TestAuthentication: with credentials, a subscribe needs the secret of the
// principal it names and every later call the secret of the framework's
// principal; refused calls change nothing; Validate rejects empty secrets.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, func(c *Config) {
		c.Credentials = map[string]string{"analytics": "s3cret", "ci": "other"}
	})
	call := func(verb protocol.FrameworkVerb, token string, body, into any) error {
		t.Helper()
		h := nats.Header{}
		if token != "" {
			h.Set(protocol.TokenHeader, token)
		}
		return frameworkCall(t, nc, verb, h, body, into)
	}
	sub := protocol.SubscribeRequest{Name: "f", Role: "eng", Principal: "analytics"}
	for _, token := range []string{"", "guess", "other", "s3cret-and-more"} {
		if err := call(protocol.VerbSubscribe, token, sub, nil); !errors.Is(err, protocol.ErrUnauthorized) {
			t.Errorf("subscribe with token %q: %v, want ErrUnauthorized", token, err)
		}
	}
	if n := len(m.View().Frameworks()); n != 0 {
		t.Fatalf("%d frameworks registered by refused subscribes", n)
	}
	var reply protocol.SubscribeReply
	if err := call(protocol.VerbSubscribe, "s3cret", sub, &reply); err != nil {
		t.Fatalf("subscribe with the secret: %v", err)
	}
	id := reply.FrameworkID
	// ci's secret does not drive analytics' framework.
	if err := call(protocol.VerbSuppress, "other", protocol.SuppressRequest{FrameworkID: id}, nil); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("suppress with another principal's secret: %v, want ErrUnauthorized", err)
	}
	if f, _ := m.View().Framework(id); f.Suppressed {
		t.Fatal("a refused suppress suppressed the framework")
	}
	if err := call(protocol.VerbSuppress, "s3cret", protocol.SuppressRequest{FrameworkID: id}, nil); err != nil {
		t.Fatalf("suppress with the secret: %v", err)
	}
	if f, _ := m.View().Framework(id); !f.Suppressed {
		t.Fatal("an authenticated suppress did not suppress")
	}

	good := httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil)
	good.Credentials = map[string]string{"analytics": "s3cret"}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate with credentials: %v", err)
	}
	bad := good
	bad.Credentials = map[string]string{"analytics": ""}
	if err := bad.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("Validate with an empty secret: %v, want ErrConfig about credentials", err)
	}
}
