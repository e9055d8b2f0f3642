package framework_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// rawCall sends one framework call straight over NATS, with the session
// header when session is not 0, and returns the reply's typed error.
func rawCall(t *testing.T, c *testcluster.Cluster, verb protocol.FrameworkVerb, session uint64, body any) error {
	t.Helper()
	nc := c.Connect("raw-" + string(verb))
	defer nc.Close()
	return rawCallWith(t, c, nc, "", session, body)
}

// rawCallOn sends one framework call on nc, on principal's subjects.
func rawCallOn(t *testing.T, c *testcluster.Cluster, nc *nats.Conn, principal string, body any) error {
	t.Helper()
	return rawCallWith(t, c, nc, principal, 0, body)
}

func rawCallWith(t *testing.T, c *testcluster.Cluster, nc *nats.Conn, principal string, session uint64, body any) error {
	t.Helper()
	typ, _ := protocol.TypeOf(body)
	data, err := protocol.Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := c.Subjects().RequestSubject(principal, body)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: subject, Data: data}
	if session != 0 {
		msg.Header = nats.Header{}
		msg.Header.Set(protocol.SessionHeader, protocol.FormatSession(session))
	}
	// While the masters elect nobody answers; nobody received it either,
	// so it is sent again.
	var reply *nats.Msg
	testutil.WaitFor(t, wait, 10*time.Millisecond, func() (err error) {
		reply, err = nc.RequestMsgWithContext(ctxT(t), msg)
		if err != nil && !errors.Is(err, nats.ErrNoResponders) {
			t.Fatal(err)
		}
		return err
	})
	return protocol.DecodeReply(reply.Data, nil)
}

// A second scheduler that subscribes with a running framework's ID takes it
// over, as in Mesos: the first one's Run ends with ErrFailedOver, calls
// made in its session are refused and change nothing, and the new one
// controls the framework's tasks.
func TestDriver_TakenOver(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	rec1 := newRecorder()
	r1 := start(t, c, rec1, framework.WithFailoverTimeout(time.Minute))
	o := rec1.WaitOffer(t, r1.d, 0, nil)
	if err := r1.d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec1.WaitState(t, "a", protocol.TaskRunning)
	id := r1.d.ID()

	rec2 := newRecorder()
	r2 := start(t, c, rec2, framework.WithFailoverTimeout(time.Minute), framework.WithFrameworkID(id))
	if err := r1.wait(t); !errors.Is(err, protocol.ErrFailedOver) {
		t.Fatalf("first scheduler's Run: %v, want ErrFailedOver", err)
	}
	if errs := rec1.Errors(); len(errs) == 0 || !errors.Is(errs[len(errs)-1], protocol.ErrFailedOver) {
		t.Fatalf("first scheduler's Error callbacks: %v", errs)
	}
	f, ok := c.WaitForLeader().View().Framework(id)
	if !ok || f.Session != 2 {
		t.Fatalf("framework after the takeover: %+v, want session 2", f)
	}

	// The first scheduler's session (1) can no longer kill the task...
	err := rawCall(t, c, protocol.VerbKill, 1, protocol.KillRequest{FrameworkID: id, TaskID: "a"})
	if !errors.Is(err, protocol.ErrFailedOver) {
		t.Fatalf("kill in the old session: %v, want ErrFailedOver", err)
	}
	rec2.WaitState(t, "a", protocol.TaskRunning)
	if tk, ok := c.WaitForLeader().View().Task(id, "a"); !ok || tk.State != protocol.TaskRunning {
		t.Fatalf("task after a fenced kill: %+v, want running", tk)
	}
	// ...nor subscribe again.
	err = rawCall(t, c, protocol.VerbSubscribe, 0, protocol.SubscribeRequest{FrameworkID: id, Name: "x",
		Role: "default", FailoverTimeout: time.Minute, Session: 1, Instance: "the-first"})
	if !errors.Is(err, protocol.ErrFailedOver) {
		t.Fatalf("subscribe in the old session: %v, want ErrFailedOver", err)
	}

	// The new scheduler controls the task and is offered what it frees.
	if err := r2.d.Kill(ctxT(t), "a", "", 0); err != nil {
		t.Fatal(err)
	}
	rec2.WaitState(t, "a", protocol.TaskKilled)
	rec2.WaitOffer(t, r2.d, 0, nil)
	if errs := rec2.Errors(); len(errs) > 0 {
		t.Fatalf("new scheduler's errors: %v", errs)
	}
}
