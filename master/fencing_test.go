package master

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// frameworkCall sends one framework call with headers over nc and returns
// the reply's typed error.
func frameworkCall(t *testing.T, nc *nats.Conn, verb protocol.FrameworkVerb, h nats.Header, body, into any) error {
	t.Helper()
	typ, _ := verb.RequestType()
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := protocol.Subjects{Prefix: "allot"}.RequestSubject(testPrincipal(body), body)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: subject, Data: data}
	if len(h) > 0 {
		msg.Header = h
	}
	reply, err := nc.RequestMsg(msg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = protocol.DecodeReply(reply.Data, into)
	if r, ok := into.(*protocol.SubscribeReply); ok && err == nil {
		if sr, ok := body.(protocol.SubscribeRequest); ok {
			testPrincipals.Store(r.FrameworkID, sr.Principal)
		}
	}
	return err
}

// TestFencing_sessions: a framework's first scheduler holds session 1, and
// events to the framework carry it; another instance subscribing with no
// session takes over (session 2); calls in session 1 are then refused, calls
// in session 2 and calls without the header are served.
func TestFencing_sessions(t *testing.T) {
	t.Parallel()
	m, nc := apiTestMaster(t, nil)
	s := protocol.Subjects{Prefix: "allot"}
	call := func(verb protocol.FrameworkVerb, session uint64, body, into any) error {
		t.Helper()
		h := nats.Header{}
		if session != 0 {
			h.Set(protocol.SessionHeader, protocol.FormatSession(session))
		}
		return frameworkCall(t, nc, verb, h, body, into)
	}
	var first protocol.SubscribeReply
	if err := call(protocol.VerbSubscribe, 0, protocol.SubscribeRequest{Name: "f", Role: "eng", Instance: "a"}, &first); err != nil {
		t.Fatal(err)
	}
	if first.Session != 1 {
		t.Fatalf("first subscribe: session %d, want 1", first.Session)
	}
	id := first.FrameworkID
	events, err := s.FrameworkEvents("", id)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeSync(events)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := call(protocol.VerbRevive, 1, protocol.ReviveRequest{FrameworkID: id}, nil); err != nil {
		t.Fatalf("revive in the holder's session: %v", err)
	}
	// The first heartbeat request to the framework carries its session.
	ev, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := protocol.ParseSession(ev.Header.Get(protocol.SessionHeader)); !ok || got != 1 {
		t.Fatalf("event header %q, want session 1", ev.Header.Get(protocol.SessionHeader))
	}

	var second protocol.SubscribeReply
	if err := call(protocol.VerbSubscribe, 0, protocol.SubscribeRequest{FrameworkID: id, Name: "f", Role: "eng", Instance: "b"}, &second); err != nil {
		t.Fatal(err)
	}
	if second.Session != 2 {
		t.Fatalf("takeover: session %d, want 2", second.Session)
	}
	for _, verb := range []protocol.FrameworkVerb{protocol.VerbSuppress, protocol.VerbTeardown} {
		var body any = protocol.SuppressRequest{FrameworkID: id}
		if verb == protocol.VerbTeardown {
			body = protocol.TeardownRequest{FrameworkID: id}
		}
		if err := call(verb, 1, body, nil); !errors.Is(err, protocol.ErrFailedOver) {
			t.Fatalf("%s in session 1 after the takeover: %v, want ErrFailedOver", verb, err)
		}
	}
	if f, ok := m.View().Framework(id); !ok || f.Suppressed {
		t.Fatalf("framework after fenced calls: %+v, want it registered and not suppressed", f)
	}
	if err := call(protocol.VerbSuppress, 2, protocol.SuppressRequest{FrameworkID: id}, nil); err != nil {
		t.Fatalf("suppress in session 2: %v", err)
	}
	if err := call(protocol.VerbRevive, 0, protocol.ReviveRequest{FrameworkID: id}, nil); err != nil {
		t.Fatalf("revive without a session: %v", err)
	}
}
