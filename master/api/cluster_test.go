package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// operatorTrio starts three masters that want the operator token "op"
// and returns them with their HTTP addresses, once one leads.
func operatorTrio(t *testing.T) (*testcluster.Cluster, []string) {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{Configure: func(_ int, cfg *master.Config) {
		cfg.OperatorToken = "op"
	}})
	c.WaitForLeader()
	var addrs []string
	for _, m := range c.Masters() {
		addrs = append(addrs, m.HTTPAddr())
	}
	return c, addrs
}

// operatorClient returns a client of addrs and a context bounding the test.
func operatorClient(t *testing.T, addrs []string, opts ...api.Option) (*api.Client, context.Context) {
	t.Helper()
	cl, err := api.NewClient(addrs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return cl, ctx
}

// The client against a real master trio: asked through an unreachable
// address and a follower, it reads the leader's state, explains a
// framework's offers, drains and activates an agent with the operator
// token, sets a role and follows the event stream.
func TestClient_againstMasters(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 2, Configure: func(_ int, cfg *master.Config) {
		cfg.OperatorToken = "op"
	}})
	leader := c.WaitForLeader()
	var follower *master.Master
	for _, m := range c.Masters() {
		if m.ID() != leader.ID() {
			follower = m
		}
	}
	// A follower first: it answers or redirects to the leader; the others
	// take over when it cannot.
	addrs := []string{"127.0.0.1:1", follower.HTTPAddr()}
	for _, m := range c.Masters() {
		if m != follower {
			addrs = append(addrs, m.HTTPAddr())
		}
	}
	cl, ctx := operatorClient(t, addrs, api.WithToken("op"))

	// The follower redirects once it has heard the leader announce itself.
	var st api.State
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() (err error) {
		st, err = cl.State(ctx)
		if err == nil && len(st.Agents) != 2 {
			err = fmt.Errorf("%d agents", len(st.Agents))
		}
		return err
	})
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		l, err := cl.Leader(ctx)
		if want := c.WaitForLeader().ID(); err != nil || l.LeaderID != want || l.SelfID != follower.ID() {
			return fmt.Errorf("Leader: %+v, %v; want leader %s as %s sees it", l, err, want, follower.ID())
		}
		return nil
	})

	unit := protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 64})
	fw := c.NewFramework(testcluster.FrameworkOptions{Role: "eng", Demand: []protocol.TaskShape{{Resources: unit, Count: 1000}}})
	checkExplain(t, cl, ctx, fw.ID(), unit)

	// Events: drain and activate until the stream has carried a drain.
	checkDrainEvent(t, cl, ctx, addrs, st.Agents[0].ID)

	w := 2.0
	rc, err := cl.SetRole(ctx, "eng", api.RoleRequest{Weight: &w, Limit: map[string]int64{protocol.ResCPUs: 500}})
	if err != nil || rc.Path != "eng" || rc.Weight != 2 || rc.Limit.Scalars[protocol.ResCPUs] != 500 {
		t.Fatalf("SetRole: %+v, %v", rc, err)
	}
	if _, err := cl.SetRole(ctx, "eng", api.RoleRequest{Weight: new(float64)}); !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("SetRole with weight 0: %v, want ErrBadRequest", err)
	}
	// The limit now keeps a second task from eng.
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		ex, err := cl.Explain(ctx, fw.ID())
		if err != nil {
			return err
		}
		if s := ex.Shapes[0]; len(s.LimitedBy) != 1 || s.LimitedBy[0] != "eng" {
			return fmt.Errorf("limited by %v, want eng", s.LimitedBy)
		}
		return nil
	})
}

// checkExplain waits until the leader explains framework fw, of role eng
// and asking for 1000 tasks of resources unit, with an outstanding offer
// and both agents, and checks the explanation and Explain's errors.
func checkExplain(t *testing.T, cl *api.Client, ctx context.Context, fw protocol.FrameworkID, unit protocol.Resources) {
	t.Helper()
	var ex api.Explanation
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() (err error) {
		ex, err = cl.Explain(ctx, fw)
		switch {
		case err != nil:
		case ex.Offers == 0:
			err = errors.New("no outstanding offer yet")
		case ex.Agents != 2:
			// A leader elected meanwhile knows agents as they re-register.
			err = fmt.Errorf("the leader's allocator knows %d agents", ex.Agents)
		}
		return err
	})
	if ex.Role != "eng" || !ex.Connected || !ex.Declared || ex.Agents != 2 || len(ex.Shapes) != 1 {
		t.Fatalf("explanation %+v", ex)
	}
	if s := ex.Shapes[0]; s.Kind != "fair" || !s.Resources.Equal(unit) || s.Pending == nil ||
		*s.Pending+s.Offered != 1000 || s.Agents.Fit+s.Agents.Resources != 2 {
		t.Fatalf("shape %+v: want fair, 1000 tasks pending or offered, both agents counted", s)
	}
	if _, err := cl.Explain(ctx, "fw-NOSUCH"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("Explain of an unknown framework: %v, want ErrNotFound", err)
	}
	if _, err := cl.Explain(ctx, "not an id"); !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("Explain of a malformed ID: %v, want ErrBadRequest", err)
	}
}

// checkDrainEvent drains and activates agent through cl until cl's event
// stream has carried the drain; without the operator token (a client of
// addrs without one) the drain is refused.
func checkDrainEvent(t *testing.T, cl *api.Client, ctx context.Context, addrs []string, agent protocol.AgentID) {
	t.Helper()
	var mu sync.Mutex
	var seen []protocol.AgentChange
	evCtx, stopEvents := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- cl.Events(evCtx, func(ev protocol.ClusterEvent) error {
			if ev.Agent != nil {
				mu.Lock()
				seen = append(seen, *ev.Agent)
				mu.Unlock()
			}
			return nil
		})
	}()
	noToken, _ := operatorClient(t, addrs)
	if _, err := noToken.DrainAgent(ctx, agent); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("DrainAgent without the token: %v, want ErrUnauthorized", err)
	}
	testutil.WaitFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		as, err := cl.DrainAgent(ctx, agent)
		if err != nil || as.State != "draining" {
			return fmt.Errorf("drain: %+v, %v", as, err)
		}
		defer func() { _, _ = cl.ActivateAgent(ctx, agent) }()
		mu.Lock()
		defer mu.Unlock()
		for _, a := range seen {
			if a.AgentID == agent && a.State == "draining" {
				return nil
			}
		}
		return errors.New("no drain event yet")
	})
	stopEvents()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Events after cancel: %v, want context.Canceled", err)
	}
}

// The masters' Raft membership through the client: three members, one the
// leader; a follower removed (the operator token needed, an unknown ID not
// found), the other two still elect; added back under its ID and address.
func TestClient_raftPeers(t *testing.T) {
	c, addrs := operatorTrio(t)
	cl, ctx := operatorClient(t, addrs, api.WithToken("op"))
	p, err := cl.RaftPeers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders, follower := 0, api.RaftPeer{}
	for _, x := range p.Peers {
		if x.Leader {
			leaders++
		} else {
			follower = x
		}
	}
	if len(p.Peers) != 3 || leaders != 1 || follower.ID == "" {
		t.Fatalf("peers %+v, want three with one leader", p.Peers)
	}

	noToken, _ := operatorClient(t, addrs)
	if _, err := noToken.RemoveRaftPeer(ctx, follower.ID); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("remove without the token: %v, want ErrUnauthorized", err)
	}
	if _, err := cl.RemoveRaftPeer(ctx, "m-nosuch"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("remove an unknown peer: %v, want ErrNotFound", err)
	}
	var after api.RaftPeers
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() (err error) {
		after, err = cl.RemoveRaftPeer(ctx, follower.ID)
		return err
	})
	if len(after.Peers) != 2 || slices.ContainsFunc(after.Peers, func(x api.RaftPeer) bool { return x.ID == follower.ID }) {
		t.Fatalf("after removing %s: %+v", follower.ID, after.Peers)
	}
	if l := c.WaitForLeader(); l == nil {
		t.Fatal("no leader after the removal")
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() (err error) {
		after, err = cl.AddRaftPeer(ctx, follower.ID, follower.Address)
		return err
	})
	if len(after.Peers) != 3 {
		t.Fatalf("after adding %s back: %+v", follower.ID, after.Peers)
	}
	if _, err := cl.AddRaftPeer(ctx, "", "x"); !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("add without an ID: %v, want ErrBadRequest", err)
	}
}

// Backup and restore through the client on a master trio: a snapshot taken
// with role a configured, restored after role b was added, leaves every
// master with a and without b, and the leader serves again; a garbled
// snapshot is refused and changes nothing.
func TestClient_snapshotRestore(t *testing.T) {
	c, addrs := operatorTrio(t)
	cl, ctx := operatorClient(t, addrs, api.WithToken("op"))
	w := 2.0
	setRole := func(path string) {
		t.Helper()
		testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
			_, err := cl.SetRole(ctx, path, api.RoleRequest{Weight: &w})
			return err
		})
	}
	setRole("a")
	var snap bytes.Buffer
	if n, err := cl.SaveSnapshot(ctx, &snap); err != nil || n == 0 || int64(snap.Len()) != n {
		t.Fatalf("save: %d bytes, %v", n, err)
	}
	setRole("b")

	noToken, _ := operatorClient(t, addrs)
	if _, err := noToken.RestoreSnapshot(ctx, snap.Bytes()); !errors.Is(err, api.ErrUnauthorized) {
		t.Fatalf("restore without the token: %v, want ErrUnauthorized", err)
	}
	if _, err := cl.RestoreSnapshot(ctx, []byte("not a snapshot")); !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("restore garbage: %v, want ErrBadRequest", err)
	}
	if _, ok := c.WaitForLeader().View().Role("b"); !ok {
		t.Fatal("a refused restore changed the state")
	}
	if _, err := cl.RestoreSnapshot(ctx, snap.Bytes()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		for _, m := range c.Masters() {
			_, hasA := m.View().Role("a")
			_, hasB := m.View().Role("b")
			if !hasA || hasB {
				return fmt.Errorf("master %s: role a %t, role b %t; want a alone", m.ID(), hasA, hasB)
			}
		}
		st, err := cl.State(ctx)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(st.Roles, func(r api.Role) bool { return r.Path == "b" }) {
			return errors.New("the leader's allocator still has role b")
		}
		return nil
	})
}
