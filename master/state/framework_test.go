package state

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestState_Apply_registerFramework(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := registerFramework("fw-1", protocol.CapGang, protocol.CapAltruistic, protocol.CapGang)
	res := h.must(CmdRegisterFramework, c)
	f, ok := h.view().Framework("fw-1")
	if !ok {
		t.Fatal("framework missing")
	}
	if res.(*Framework) != f {
		t.Errorf("got result %v, want the stored framework", res)
	}
	want := Framework{
		ID: "fw-1", Name: "name-fw-1", Principal: "p", Role: "eng", Weight: 1,
		FailoverTimeout: 60e9, Capabilities: []string{protocol.CapAltruistic, protocol.CapGang},
		Connected: true, RegisteredAt: t0, Session: 1,
	}
	if !reflect.DeepEqual(*f, want) {
		t.Errorf("got %+v, want %+v", *f, want)
	}
	if !f.HasCapability(protocol.CapGang) || f.HasCapability(protocol.CapPartitionAware) {
		t.Errorf("got capabilities %v, want gang and not partition_aware", f.Capabilities)
	}
}

func TestState_Apply_registerFrameworkResubscribe(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	h.must(CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "fw-1", Time: t0 + 5})
	c := registerFramework("fw-1")
	c.Name, c.Role, c.Weight, c.Suppressed, c.Resubscribe, c.Time = "renamed", "other", 2, true, true, t0+100
	h.must(CmdRegisterFramework, c)
	f, _ := h.view().Framework("fw-1")
	want := Framework{
		ID: "fw-1", Name: "renamed", Principal: "p", Role: "other", Weight: 2,
		FailoverTimeout: 60e9, Connected: true, RegisteredAt: t0, Suppressed: true, Session: 1,
	}
	if !reflect.DeepEqual(*f, want) {
		t.Errorf("got %+v, want %+v", *f, want)
	}
	if got := len(h.view().TasksByFramework("fw-1")); got != 1 {
		t.Errorf("got %d tasks after resubscribe, want 1", got)
	}
}

// TestState_Apply_registerFrameworkSessions: the holder re-subscribing
// (or sending its subscribe again) keeps the session; another scheduler
// with session 0 takes over and the session goes up; the old holder is then
// refused, and so is a session the framework never had.
func TestState_Apply_registerFrameworkSessions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	reg := registerFramework("fw-1")
	reg.Instance = "a"
	if f := h.must(CmdRegisterFramework, reg).(*Framework); f.Session != 1 || f.Instance != "a" {
		t.Fatalf("new framework: session %d instance %q, want 1 and a", f.Session, f.Instance)
	}
	resub := func(instance string, session uint64) *RegisterFramework {
		c := registerFramework("fw-1")
		c.Resubscribe, c.Instance, c.Session, c.Time = true, instance, session, t0+10
		return c
	}
	for _, c := range []*RegisterFramework{resub("a", 1), resub("a", 0)} {
		if f := h.must(CmdRegisterFramework, c).(*Framework); f.Session != 1 || f.Instance != "a" {
			t.Fatalf("holder again (session %d): session %d instance %q, want 1 and a", c.Session, f.Session, f.Instance)
		}
	}
	if f := h.must(CmdRegisterFramework, resub("b", 0)).(*Framework); f.Session != 2 || f.Instance != "b" {
		t.Fatalf("takeover: session %d instance %q, want 2 and b", f.Session, f.Instance)
	}
	if f := h.must(CmdRegisterFramework, resub("b", 0)).(*Framework); f.Session != 2 {
		t.Fatalf("takeover sent again: session %d, want 2", f.Session)
	}
	for _, c := range []*RegisterFramework{resub("a", 1), resub("c", 7), resub("", 1)} {
		if _, err := h.apply(CmdRegisterFramework, c); !errors.Is(err, protocol.ErrFailedOver) {
			t.Errorf("instance %q with session %d: got %v, want ErrFailedOver", c.Instance, c.Session, err)
		}
	}
	if f, _ := h.view().Framework("fw-1"); f.Session != 2 || f.Instance != "b" {
		t.Fatalf("after refused subscribes: session %d instance %q, want 2 and b", f.Session, f.Instance)
	}
	// A subscriber that names no instance (it tracks no sessions) neither
	// takes over nor is refused.
	if f := h.must(CmdRegisterFramework, resub("", 0)).(*Framework); f.Session != 2 || f.Instance != "b" {
		t.Fatalf("subscriber without instance: session %d instance %q, want 2 and b", f.Session, f.Instance)
	}
}

// TestState_Apply_registerFrameworkNonce: a new registration sent again
// with the same nonce and principal returns the first framework and
// registers no second one; another principal's or nonce's does.
func TestState_Apply_registerFrameworkNonce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := registerFramework("fw-1")
	first.Nonce = "sub-1"
	h.must(CmdRegisterFramework, first)
	again := registerFramework("fw-2")
	again.Nonce = "sub-1"
	if f := h.must(CmdRegisterFramework, again).(*Framework); f.ID != "fw-1" {
		t.Errorf("retried registration got %s, want fw-1", f.ID)
	}
	if _, ok := h.view().Framework("fw-2"); ok {
		t.Error("retried registration registered fw-2")
	}
	other := registerFramework("fw-3")
	other.Nonce, other.Principal = "sub-1", "someone-else"
	if f := h.must(CmdRegisterFramework, other).(*Framework); f.ID != "fw-3" {
		t.Errorf("another principal's registration got %s, want fw-3", f.ID)
	}
	if n := len(h.view().Frameworks()); n != 2 {
		t.Errorf("got %d frameworks, want 2", n)
	}
}

func TestState_Apply_registerFrameworkErrors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	inv := protocol.ErrInvalidArgument
	with := func(f func(*RegisterFramework)) *RegisterFramework {
		c := registerFramework("fw-new")
		f(c)
		return c
	}
	runErrCases(t, h, []errCase{
		{"duplicate", CmdRegisterFramework, registerFramework("fw-1"), protocol.ErrDuplicate},
		{"resubscribe unknown", CmdRegisterFramework, with(func(c *RegisterFramework) { c.Resubscribe = true }), protocol.ErrUnknownFramework},
		{"principal changed", CmdRegisterFramework, with(func(c *RegisterFramework) {
			c.ID, c.Resubscribe, c.Principal = "fw-1", true, "mallory"
		}), protocol.ErrUnauthorized},
		{"no id", CmdRegisterFramework, with(func(c *RegisterFramework) { c.ID = "" }), inv},
		{"bad id", CmdRegisterFramework, with(func(c *RegisterFramework) { c.ID = "a b" }), inv},
		{"no name", CmdRegisterFramework, with(func(c *RegisterFramework) { c.Name = "" }), inv},
		{"bad role", CmdRegisterFramework, with(func(c *RegisterFramework) { c.Role = "/x" }), inv},
		{"negative failover", CmdRegisterFramework, with(func(c *RegisterFramework) { c.FailoverTimeout = -1 }), inv},
		{"negative weight", CmdRegisterFramework, with(func(c *RegisterFramework) { c.Weight = -1 }), inv},
		{"empty capability", CmdRegisterFramework, with(func(c *RegisterFramework) { c.Capabilities = []string{""} }), inv},
		{"no time", CmdRegisterFramework, with(func(c *RegisterFramework) { c.Time = 0 }), inv},
	})
}

func TestState_Apply_setFrameworkConnected(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	steps := []struct {
		name      string
		connected bool
		time      int64
		wantConn  bool
		wantDisc  int64
	}{
		{"disconnect", false, t0 + 100, false, t0 + 100},
		{"disconnect again keeps the first time", false, t0 + 200, false, t0 + 100},
		{"reconnect clears", true, t0 + 300, true, 0},
		{"connect again", true, t0 + 400, true, 0},
		{"disconnect anew", false, t0 + 500, false, t0 + 500},
	}
	for _, st := range steps {
		res := h.must(CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "fw-1", Connected: st.connected, Time: st.time})
		f, _ := h.view().Framework("fw-1")
		if res.(*Framework) != f {
			t.Errorf("%s: result is not the stored framework", st.name)
		}
		if f.Connected != st.wantConn || f.DisconnectedAt != st.wantDisc {
			t.Errorf("%s: got connected %v disconnected_at %d, want %v %d",
				st.name, f.Connected, f.DisconnectedAt, st.wantConn, st.wantDisc)
		}
	}
	runErrCases(t, h, []errCase{
		{"unknown", CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "fw-x", Time: t0}, protocol.ErrUnknownFramework},
		{"bad id", CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "", Time: t0}, protocol.ErrInvalidArgument},
		{"no time", CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: "fw-1"}, protocol.ErrInvalidArgument},
	})
}

func TestState_Apply_setFrameworkSuppressed(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	for _, supp := range []bool{true, true, false} {
		h.must(CmdSetFrameworkSuppressed, &SetFrameworkSuppressed{FrameworkID: "fw-1", Suppressed: supp})
		if f, _ := h.view().Framework("fw-1"); f.Suppressed != supp {
			t.Errorf("got suppressed %v, want %v", f.Suppressed, supp)
		}
	}
	runErrCases(t, h, []errCase{
		{"unknown", CmdSetFrameworkSuppressed, &SetFrameworkSuppressed{FrameworkID: "fw-x"}, protocol.ErrUnknownFramework},
	})
}

func TestState_Apply_removeFramework(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1", "t2"))
	h.must(CmdLaunchTasks, launch("fw-1", "ag-2", "t3"))
	h.must(CmdLaunchTasks, launch("fw-pa", "ag-1", "t1"))
	h.must(CmdUpdateTaskStatus, updates(update("fw-1", "t2", "ag-1", protocol.TaskFinished, "u1")))
	res := h.must(CmdRemoveFramework, &RemoveFramework{FrameworkID: "fw-1"}).(RemoveFrameworkResult)
	want := []TaskKey{{"fw-1", "t1"}, {"fw-1", "t2"}, {"fw-1", "t3"}}
	if got := keys(res.Tasks); !slices.Equal(got, want) {
		t.Errorf("got removed %v, want %v", got, want)
	}
	v := h.view()
	if _, ok := v.Framework("fw-1"); ok {
		t.Error("framework still present")
	}
	if got := keys(v.Tasks()); !slices.Equal(got, []TaskKey{{"fw-pa", "t1"}}) {
		t.Errorf("got tasks %v, want only fw-pa/t1", got)
	}
	if got := keys(v.TasksByAgent("ag-2")); len(got) != 0 {
		t.Errorf("got ag-2 tasks %v, want none", got)
	}
	runErrCases(t, h, []errCase{
		{"unknown", CmdRemoveFramework, &RemoveFramework{FrameworkID: "fw-1"}, protocol.ErrUnknownFramework},
	})
}

// TestState_Apply_registerFrameworkNonceNotFirst: a retried registration
// finds its framework by nonce wherever it sorts among the others. It
// fails with the search stopping at the first framework that does not
// match.
func TestState_Apply_registerFrameworkNonceNotFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i, nonce := range []string{"other-1", "other-2", "mine"} {
		c := registerFramework(protocol.FrameworkID(fmt.Sprintf("fw-%d", i+1)))
		c.Nonce = nonce
		h.must(CmdRegisterFramework, c)
	}
	again := registerFramework("fw-9")
	again.Nonce = "mine"
	if f := h.must(CmdRegisterFramework, again).(*Framework); f.ID != "fw-3" {
		t.Errorf("retried registration got %s, want fw-3", f.ID)
	}
	if n := len(h.view().Frameworks()); n != 3 {
		t.Errorf("got %d frameworks, want 3", n)
	}
}
