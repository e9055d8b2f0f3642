package master

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// principalConn connects to m's NATS as framework principal p, and
// returns the connection and a channel of its asynchronous errors.
func principalConn(t *testing.T, m *Master, p, secret string) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 16)
	nc, err := nats.Connect(m.NATSURL(), nats.UserInfo("framework."+p, secret),
		nats.CustomInboxPrefix(protocol.Subjects{}.Inbox(protocol.KindFramework, p)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

// callAs sends body on principal's subject for it and returns the reply's
// typed error, or the request's own error (a timeout when nothing
// answered).
func callAs(t *testing.T, nc *nats.Conn, principal string, body any, into any) error {
	t.Helper()
	typ, _ := protocol.TypeOf(body)
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.Subjects{}.RequestSubject(principal, body)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := nc.Request(subject, data, 2*time.Second)
	if err != nil {
		return err
	}
	return protocol.DecodeReply(msg.Data, into)
}

// TestAuthentication: with credentials, a connection is its principal:
// it subscribes only as itself, calls for another principal's framework
// on its own subjects are refused with ErrUnauthorized before anything is
// decoded, and it cannot publish on another principal's subjects at all.
// Refused calls change nothing. Validate rejects bad names and secrets.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	m, _ := apiTestMaster(t, func(c *Config) {
		c.NATS.MasterSecret = "m-s3cret"
		c.Credentials = map[string]string{"analytics": "s3cret", "ci": "other"}
	})
	analytics, _ := principalConn(t, m, "analytics", "s3cret")
	ci, ciErrs := principalConn(t, m, "ci", "other")

	sub := protocol.SubscribeRequest{Name: "f", Role: "eng", Principal: "ci", FailoverTimeout: time.Hour}
	if err := callAs(t, analytics, "analytics", sub, nil); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("analytics subscribing as ci: %v, want ErrUnauthorized", err)
	}
	if n := len(m.View().Frameworks()); n != 0 {
		t.Fatalf("%d frameworks registered by a refused subscribe", n)
	}
	var reply protocol.SubscribeReply
	sub.Principal = "analytics"
	if err := callAs(t, analytics, "analytics", sub, &reply); err != nil {
		t.Fatalf("subscribe as itself: %v", err)
	}
	id := reply.FrameworkID
	suppress := protocol.SuppressRequest{FrameworkID: id}
	// ci, on its own subjects, for analytics' framework.
	if err := callAs(t, ci, "ci", suppress, nil); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("ci suppressing analytics' framework: %v, want ErrUnauthorized", err)
	}
	// ci, on analytics' subjects: the server drops it, nobody answers.
	if err := callAs(t, ci, "analytics", suppress, nil); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("ci publishing on analytics' subject: %v, want no answer", err)
	}
	select {
	case err := <-ciErrs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("ci's error: %v, want a permissions violation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no permissions violation reported to ci")
	}
	if f, _ := m.View().Framework(id); f.Suppressed {
		t.Fatal("a refused suppress suppressed the framework")
	}
	if err := callAs(t, analytics, "analytics", suppress, nil); err != nil {
		t.Fatalf("suppress by its principal: %v", err)
	}
	if f, _ := m.View().Framework(id); !f.Suppressed {
		t.Fatal("an authenticated suppress did not suppress")
	}

	good := httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil)
	good.NATS.MasterSecret = "m-s3cret"
	good.Credentials = map[string]string{"analytics": "s3cret"}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate with credentials: %v", err)
	}
	for name, creds := range map[string]map[string]string{
		"an empty secret":         {"analytics": ""},
		"a name with a dot":       {"a.b": "s"},
		"the anonymous principal": {protocol.AnonymousPrincipal: "s"},
	} {
		bad := good
		bad.Credentials = creds
		if err := bad.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "credentials") {
			t.Errorf("Validate with %s: %v, want ErrConfig about credentials", name, err)
		}
	}
}
