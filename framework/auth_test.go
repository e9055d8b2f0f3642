package framework_test

import (
	"errors"
	"testing"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/protocol"
)

// With credentials configured, a framework with its principal's secret
// subscribes and launches; one with a wrong secret, none, or an unknown
// principal is refused by the NATS servers and Run ends with
// ErrUnauthorized; another principal that learnt the framework's ID can
// neither kill its task on its own subjects nor reach the framework's.
func TestDriver_Authentication(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1,
		Credentials: map[string]string{"analytics": "s3cret", "ci": "other"}})
	rec := newRecorder()
	r := start(t, c, rec, framework.WithPrincipal("analytics"), framework.WithSecret("s3cret"),
		framework.WithFailoverTimeout(time.Minute))
	o := rec.WaitOffer(t, r.d, 0, nil)
	if err := r.d.Launch(ctxT(t), []protocol.OfferID{o.ID}, task("a", unit(), testcluster.RunUntilKilled())); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskRunning)

	for name, opts := range map[string][]framework.Option{
		"wrong secret":       {framework.WithPrincipal("analytics"), framework.WithSecret("guess")},
		"another's secret":   {framework.WithPrincipal("analytics"), framework.WithSecret("other")},
		"no secret":          {framework.WithPrincipal("analytics")},
		"unknown principal":  {framework.WithPrincipal("nobody"), framework.WithSecret("s3cret")},
		"takeover, no creds": {framework.WithFrameworkID(r.d.ID())},
		// ci's own credential, claiming analytics' framework: its
		// subscribe goes on ci's subjects and the leader refuses it.
		"another principal's framework": {framework.WithPrincipal("ci"), framework.WithSecret("other"),
			framework.WithFrameworkID(r.d.ID())},
	} {
		bad := startNoWait(t, c, newRecorder(), opts...)
		if err := bad.wait(t); !errors.Is(err, protocol.ErrUnauthorized) {
			t.Errorf("%s: Run: %v, want ErrUnauthorized", name, err)
		}
	}
	ci := c.ConnectAs(protocol.Identity{Kind: protocol.KindFramework, Name: "ci"})
	kill := protocol.KillRequest{FrameworkID: r.d.ID(), TaskID: "a"}
	if err := rawCallOn(t, c, ci, "ci", kill); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("ci killing analytics' task: %v, want ErrUnauthorized", err)
	}
	if tk, ok := c.WaitForLeader().View().Task(r.d.ID(), "a"); !ok || tk.State != protocol.TaskRunning {
		t.Fatalf("task after a refused kill: %+v, want running", tk)
	}
	if err := r.d.Kill(ctxT(t), "a", "", 0); err != nil {
		t.Fatal(err)
	}
	rec.WaitState(t, "a", protocol.TaskKilled)
	if errs := rec.Errors(); len(errs) > 0 {
		t.Fatalf("authenticated framework's errors: %v", errs)
	}
}
