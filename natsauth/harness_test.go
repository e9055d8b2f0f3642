package natsauth

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// waitTimeout bounds every wait for something that should happen.
const waitTimeout = 10 * time.Second

// testSubjects has a two-token prefix, so that a rule written against the
// default prefix, or against one token, shows.
var testSubjects = protocol.Subjects{Prefix: "acme.prod"}

// testConfig is a cluster with two of everything, so that every rule has
// another principal to be kept from.
func testConfig() Config {
	return Config{
		Subjects:      testSubjects,
		MasterSecret:  "master-secret",
		Frameworks:    map[string]string{"a": "secret-a", "b": "secret-b"},
		Agents:        map[string]string{"rack1": "secret-rack1", "rack2": "secret-rack2"},
		OperatorToken: "operator-token",
	}
}

// startEmbedded starts an embedded server authenticating with cfg and
// returns it. tweak, when set, adjusts the options first.
func startEmbedded(t *testing.T, cfg Config, tweak func(*server.Options)) *server.Server {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	if tweak != nil {
		tweak(opts)
	}
	if err := cfg.Apply(opts); err != nil {
		t.Fatal(err)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(waitTimeout) {
		t.Fatal("embedded NATS server not ready")
	}
	return srv
}

// client is a connection that records the permission violations the
// server reports to it.
type client struct {
	name       string
	nc         *nats.Conn
	violations chan string
}

// connect connects to url and fails the test if the server refuses.
func connect(t *testing.T, name, url string, opts ...nats.Option) *client {
	t.Helper()
	c, err := dial(name, url, opts...)
	if err != nil {
		t.Fatalf("%s: connect: %v", name, err)
	}
	t.Cleanup(c.nc.Close)
	return c
}

// dial connects to url, reporting a refusal as an error.
func dial(name, url string, opts ...nats.Option) (*client, error) {
	c := &client{name: name, violations: make(chan string, 64)}
	opts = append([]nats.Option{
		nats.Name(name), nats.NoReconnect(), nats.Timeout(waitTimeout),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				c.violations <- err.Error()
			}
		}),
	}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, err
	}
	c.nc = nc
	return c, nil
}

func (c *client) flush(t *testing.T) {
	t.Helper()
	if err := c.nc.FlushTimeout(waitTimeout); err != nil {
		t.Fatalf("%s: flush: %v", c.name, err)
	}
}

// expectViolation waits for the server to report that c may not do op
// ("Publish" or "Subscription") on subject. Checks run one at a time, so
// any other violation first is a failure.
func (c *client) expectViolation(t *testing.T, op, subject string) {
	t.Helper()
	want := fmt.Sprintf("for %s to %q", op, subject)
	select {
	case got := <-c.violations:
		if !strings.Contains(got, want) {
			t.Fatalf("%s: want a violation %s, got %q", c.name, want, got)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("%s: no permission violation %s", c.name, want)
	}
}

// expectNoViolation fails on a violation already reported.
func (c *client) expectNoViolation(t *testing.T) {
	t.Helper()
	select {
	case got := <-c.violations:
		t.Fatalf("%s: unexpected %q", c.name, got)
	default:
	}
}

// receive waits for a message on subject.
func receive(t *testing.T, who string, ch <-chan *nats.Msg, subject string) *nats.Msg {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case m := <-ch:
			if m.Subject == subject {
				return m
			}
		case <-deadline:
			t.Fatalf("%s: nothing received on %s", who, subject)
			return nil
		}
	}
}

// expectNothing fails when ch holds a message. Callers first flush the
// sending connection, then the receiving one: the server routes a
// message before answering the sender's flush, and queues it to the
// receiver before the receiver's flush answer, which nats.go reads after
// the message. So a message that crossed is in ch by now.
func expectNothing(t *testing.T, who string, ch <-chan *nats.Msg) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("%s: received %s, which should have been stopped", who, m.Subject)
	default:
	}
}

// check is one thing a connection tries: to publish on subject, or to
// subscribe to it and receive a message the observer publishes on msg.
type check struct {
	op      string // "pub" or "sub"
	subject string
	msg     string // for "sub": a subject subject matches; empty means subject
	allow   bool
}

func pubOK(s string) check          { return check{op: "pub", subject: s, allow: true} }
func pubDenied(s string) check      { return check{op: "pub", subject: s} }
func subOK(s, msg string) check     { return check{op: "sub", subject: s, msg: msg, allow: true} }
func subDenied(s, msg string) check { return check{op: "sub", subject: s, msg: msg} }

// runChecks makes c try each check, with observer (a master, which may
// do anything) on the other end: publishing what c subscribes to, and
// subscribing to what c publishes.
func runChecks(t *testing.T, observer, c *client, checks []check) {
	t.Helper()
	for _, k := range checks {
		if k.op == "pub" {
			checkPublish(t, observer, c, k)
		} else {
			checkSubscribe(t, observer, c, k)
		}
	}
	c.flush(t)
	c.expectNoViolation(t)
}

func checkPublish(t *testing.T, observer, c *client, k check) {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	sub, err := observer.nc.ChanSubscribe(k.subject, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	observer.flush(t)
	if err := c.nc.Publish(k.subject, []byte(c.name)); err != nil {
		t.Fatal(err)
	}
	if k.allow {
		c.flush(t)
		receive(t, fmt.Sprintf("publish by %s", c.name), ch, k.subject)
		return
	}
	c.expectViolation(t, "Publish", k.subject)
	c.flush(t)
	observer.flush(t)
	expectNothing(t, fmt.Sprintf("publish by %s on %s", c.name, k.subject), ch)
}

func checkSubscribe(t *testing.T, observer, c *client, k check) {
	t.Helper()
	msg := k.msg
	if msg == "" {
		msg = k.subject
	}
	ch := make(chan *nats.Msg, 64)
	sub, err := c.nc.ChanSubscribe(k.subject, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if k.allow {
		c.flush(t)
	} else {
		c.expectViolation(t, "Subscription", k.subject)
	}
	if err := observer.nc.Publish(msg, []byte(observer.name)); err != nil {
		t.Fatal(err)
	}
	observer.flush(t)
	who := fmt.Sprintf("%s subscribed to %s", c.name, k.subject)
	if k.allow {
		receive(t, who, ch, msg)
		return
	}
	c.flush(t)
	expectNothing(t, who, ch)
}
