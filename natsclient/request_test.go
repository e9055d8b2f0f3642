package natsclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// connect starts an embedded NATS server and returns a client of it.
func connect(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(startServer(t).ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// answer replies to requests on subject with reply(n), n counting from 1.
func answer(t *testing.T, nc *nats.Conn, subject string, reply func(n int) error) {
	t.Helper()
	n := 0
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		n++
		data, err := protocol.EncodeReply(nil, reply(n))
		if err != nil {
			t.Error(err)
			return
		}
		_ = m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

var heartbeat = protocol.HeartbeatRequest{AgentID: "ag-1"}

// TestRequester_retriesUntilAnswered: Retry repeats a request the leader
// refuses as not leading, and returns nil once it is answered; a refusal
// retrying cannot fix comes back at once, typed.
func TestRequester_retriesUntilAnswered(t *testing.T) {
	nc := connect(t)
	r := Requester{Conn: nc, Attempt: time.Second, BackoffMin: time.Millisecond, BackoffMax: 4 * time.Millisecond}
	calls := 0
	answer(t, nc, "t.flaky", func(n int) error {
		calls = n
		if n < 3 {
			return protocol.Errorf(protocol.ErrNotLeader, "not yet")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Retry(ctx, "t.flaky", protocol.MsgHeartbeatRequest, heartbeat, nil); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	if calls != 3 {
		t.Fatalf("answered on attempt %d, want 3", calls)
	}

	answer(t, nc, "t.refuse", func(int) error { return protocol.Errorf(protocol.ErrInvalidArgument, "no") })
	err := r.Retry(ctx, "t.refuse", protocol.MsgHeartbeatRequest, heartbeat, nil)
	if !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("Retry of a refused request: %v, want ErrInvalidArgument", err)
	}
	if err := r.Once(ctx, "t.refuse", protocol.MsgHeartbeatRequest, heartbeat, nil); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("Once: %v, want ErrInvalidArgument", err)
	}
}

// TestRequester_stopsWithContext: while the leader keeps refusing as not
// leading, Retry keeps trying until its context ends and then reports the
// context's error; with nobody listening at all, the same.
func TestRequester_stopsWithContext(t *testing.T) {
	nc := connect(t)
	r := Requester{Conn: nc, Attempt: time.Second, BackoffMin: time.Millisecond, BackoffMax: 4 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	answer(t, nc, "t.busy", func(n int) error {
		calls = n
		if n == 3 {
			cancel()
		}
		return protocol.Errorf(protocol.ErrNotLeader, "not leading")
	})
	if err := r.Retry(ctx, "t.busy", protocol.MsgHeartbeatRequest, heartbeat, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Retry stopped by its context: %v, want context.Canceled", err)
	}
	if calls < 3 {
		t.Fatalf("gave up after %d attempts, before its context ended", calls)
	}

	short, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer stop()
	if err := r.Retry(short, "t.nobody", protocol.MsgHeartbeatRequest, heartbeat, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Retry with nobody listening: %v, want context.DeadlineExceeded", err)
	}
}
