package framework_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

func openStore(t *testing.T, c *testcluster.Cluster, opts ...framework.Option) *framework.Store {
	t.Helper()
	all := append([]framework.Option{framework.WithNATSURLs(c.NATSURL()), framework.WithLogger(testlog.New(t)),
		framework.WithRequestTimeout(time.Second)}, opts...)
	s, err := framework.OpenStore(all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestStore: a principal's store through OpenStore, without a framework:
// puts, compare-and-set, deletes, pages of a list, and values that
// survive the leader's loss.
func TestStore(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	s := openStore(t, c)
	ctx := ctxT(t)
	rev, err := s.Create(ctx, "runner/id", []byte("fw-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "runner/id", []byte("fw-2")); !errors.Is(err, protocol.ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	if _, err := s.Update(ctx, "runner/id", []byte("fw-2"), rev+1000); !errors.Is(err, protocol.ErrConflict) {
		t.Fatalf("update at a stale revision: %v, want ErrConflict", err)
	}
	rev2, err := s.Update(ctx, "runner/id", []byte("fw-2"), rev)
	if err != nil || rev2 <= rev {
		t.Fatalf("update: %d, %v", rev2, err)
	}
	item, ok, err := s.Get(ctx, "runner/id")
	if err != nil || !ok || string(item.Value) != "fw-2" || item.Revision != rev2 {
		t.Fatalf("get: %+v %v %v", item, ok, err)
	}
	if _, ok, err := s.Get(ctx, "runner/none"); err != nil || ok {
		t.Fatalf("get of nothing: %v %v", ok, err)
	}
	// More entries than one page holds.
	for i := range protocol.MaxStoreListLen + 5 {
		if _, err := s.Put(ctx, fmt.Sprintf("jobs/%04d", i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := s.List(ctx, "jobs/")
	if err != nil || len(items) != protocol.MaxStoreListLen+5 || items[0].Key != "jobs/0000" || items[len(items)-1].Key != "jobs/1004" {
		t.Fatalf("list: %d items, %v", len(items), err)
	}
	if found, err := s.Delete(ctx, "jobs/0000", 0); err != nil || !found {
		t.Fatalf("delete: %v %v", found, err)
	}
	if _, err := s.Put(ctx, "big", bytes.Repeat([]byte("x"), protocol.MaxStoreValueSize+1)); !errors.Is(err, protocol.ErrTooLarge) {
		t.Fatalf("oversized value: %v, want ErrTooLarge", err)
	}
	c.KillLeader()
	c.WaitForLeader()
	item, ok, err = s.Get(ctx, "runner/id")
	if err != nil || !ok || string(item.Value) != "fw-2" {
		t.Fatalf("after the leader's loss: %+v %v %v", item, ok, err)
	}
	if items, err := s.List(ctx, "jobs/"); err != nil || len(items) != protocol.MaxStoreListLen+4 {
		t.Fatalf("list after the leader's loss: %d, %v", len(items), err)
	}
}

// TestStore_isolated: each principal reaches only its own store. Another
// principal sees nothing of it, cannot reach it on its subjects (the NATS
// servers refuse), and a request naming another principal's framework is
// refused by the leader; nothing changes.
func TestStore_isolated(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1,
		Credentials: map[string]string{"analytics": "s3cret", "ci": "other"}})
	ctx := ctxT(t)
	a := openStore(t, c, framework.WithPrincipal("analytics"), framework.WithSecret("s3cret"))
	ci := openStore(t, c, framework.WithPrincipal("ci"), framework.WithSecret("other"))
	if _, err := a.Put(ctx, "secret", []byte("analytics'")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ci.Get(ctx, "secret"); err != nil || ok {
		t.Fatalf("ci reading analytics' key: %v %v, want nothing", ok, err)
	}
	if items, err := ci.List(ctx, ""); err != nil || len(items) != 0 {
		t.Fatalf("ci listing: %v %v, want nothing", items, err)
	}
	if _, err := ci.Put(ctx, "secret", []byte("ci's")); err != nil {
		t.Fatal(err)
	}

	// ci's connection on analytics' subject: the servers refuse it.
	conn := c.ConnectAs(protocol.Identity{Kind: protocol.KindFramework, Name: "ci"})
	put := protocol.StoreRequest{Op: protocol.StorePut, Key: "secret", Value: []byte("forged")}
	data, err := protocol.Encode(protocol.MsgStoreRequest, put)
	if err != nil {
		t.Fatal(err)
	}
	subject, err := c.Subjects().RequestSubject("analytics", put)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := conn.RequestMsgWithContext(short, &nats.Msg{Subject: subject, Data: data}); err == nil {
		t.Fatal("ci's request on analytics' subject was answered")
	}
	// On its own subject, naming analytics' framework: refused.
	fw := start(t, c, newRecorder(), framework.WithPrincipal("analytics"), framework.WithSecret("s3cret"))
	put.FrameworkID = fw.d.ID()
	if err := rawCallOn(t, c, conn, "ci", put); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Fatalf("ci naming analytics' framework: %v, want ErrUnauthorized", err)
	}
	item, _, err := a.Get(ctx, "secret")
	if err != nil || string(item.Value) != "analytics'" {
		t.Fatalf("analytics' value after the attempts: %q %v", item.Value, err)
	}
	// Malformed requests: typed errors.
	for name, bad := range map[string]protocol.StoreRequest{
		"unknown op":     {Op: "truncate"},
		"no key":         {Op: protocol.StoreGet},
		"control in key": {Op: protocol.StorePut, Key: "a\nb"},
		"limit":          {Op: protocol.StoreList, Limit: protocol.MaxStoreListLen + 1},
		"create and if":  {Op: protocol.StorePut, Key: "k", Create: true, IfRevision: 2},
		"bad framework":  {Op: protocol.StoreGet, Key: "k", FrameworkID: "fw-nobody"},
	} {
		err := rawCallOn(t, c, conn, "ci", bad)
		if !errors.Is(err, protocol.ErrInvalidArgument) && !errors.Is(err, protocol.ErrUnknownFramework) {
			t.Errorf("%s: %v, want a typed refusal", name, err)
		}
	}
}

// TestStore_fencedAfterTakeover: a scheduler's store calls go in its
// session, so once another scheduler took the framework over, the first
// one's writes are refused and change nothing.
func TestStore_fencedAfterTakeover(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{Agents: 1})
	r1 := start(t, c, newRecorder(), framework.WithFailoverTimeout(time.Minute))
	ctx := ctxT(t)
	if _, err := r1.d.Store().Put(ctx, "owner", []byte("first")); err != nil {
		t.Fatal(err)
	}
	r2 := start(t, c, newRecorder(), framework.WithFrameworkID(r1.d.ID()), framework.WithFailoverTimeout(time.Minute))
	if _, err := r2.d.Store().Put(ctx, "owner", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if err := r1.wait(t); !errors.Is(err, protocol.ErrFailedOver) {
		t.Fatalf("first scheduler's Run: %v, want ErrFailedOver", err)
	}
	if _, err := r1.d.Store().Put(ctx, "owner", []byte("late")); err == nil {
		t.Fatal("the scheduler taken over wrote")
	}
	item, _, err := r2.d.Store().Get(ctx, "owner")
	if err != nil || string(item.Value) != "second" {
		t.Fatalf("value: %q %v", item.Value, err)
	}
	if _, _, err := (&framework.Driver{}).Store().Get(ctx, "owner"); !errors.Is(err, framework.ErrNotRunning) {
		t.Fatalf("a driver that never ran: %v, want ErrNotRunning", err)
	}
}
