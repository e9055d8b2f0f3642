package state

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func put(principal, key, value string) *StorePut {
	return &StorePut{Principal: principal, Key: key, Value: []byte(value)}
}

// TestState_Apply_store: puts, conditional puts and deletes, each
// principal seeing only its own keys, revisions the writes' indexes.
func TestState_Apply_store(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rev := h.must(CmdStorePut, put("alice", "jobs/web", "v1")).(uint64)
	h.must(CmdStorePut, put("bob", "jobs/web", "bob's"))
	if e, ok := h.view().StoreGet("alice", "jobs/web"); !ok || string(e.Value) != "v1" || e.Revision != rev {
		t.Fatalf("alice's entry: %+v %v", e, ok)
	}
	if e, _ := h.view().StoreGet("bob", "jobs/web"); string(e.Value) != "bob's" {
		t.Fatalf("bob's entry: %+v", e)
	}
	// Create only where nothing is.
	_, err := h.apply(CmdStorePut, &StorePut{Principal: "alice", Key: "jobs/web", Value: []byte("x"), Create: true})
	if !errors.Is(err, protocol.ErrConflict) {
		t.Errorf("create over an entry: %v, want ErrConflict", err)
	}
	// Conditional on the revision.
	_, err = h.apply(CmdStorePut, &StorePut{Principal: "alice", Key: "jobs/web", Value: []byte("v2"), IfRevision: rev + 100})
	if !errors.Is(err, protocol.ErrConflict) {
		t.Errorf("put at a stale revision: %v, want ErrConflict", err)
	}
	rev2 := h.must(CmdStorePut, &StorePut{Principal: "alice", Key: "jobs/web", Value: []byte("v2"), IfRevision: rev}).(uint64)
	if e, _ := h.view().StoreGet("alice", "jobs/web"); string(e.Value) != "v2" || e.Revision != rev2 || rev2 <= rev {
		t.Errorf("after the conditional put: %+v", e)
	}
	_, err = h.apply(CmdStoreDelete, &StoreDelete{Principal: "alice", Key: "jobs/web", IfRevision: rev})
	if !errors.Is(err, protocol.ErrConflict) {
		t.Errorf("delete at a stale revision: %v, want ErrConflict", err)
	}
	if got := h.must(CmdStoreDelete, &StoreDelete{Principal: "alice", Key: "jobs/web", IfRevision: rev2}); got != true {
		t.Errorf("delete: %v", got)
	}
	if got := h.must(CmdStoreDelete, &StoreDelete{Principal: "alice", Key: "jobs/web"}); got != false {
		t.Errorf("delete of nothing: %v", got)
	}
	if _, ok := h.view().StoreGet("alice", "jobs/web"); ok {
		t.Error("alice's entry survived its delete")
	}
	if e, ok := h.view().StoreGet("bob", "jobs/web"); !ok || string(e.Value) != "bob's" {
		t.Errorf("bob's entry after alice's delete: %+v %v", e, ok)
	}
	if u := h.view().StoreUsage("alice"); u != (StoreUsage{}) {
		t.Errorf("alice's usage after deleting all: %+v", u)
	}
	if u := h.view().StoreUsage("bob"); u != (StoreUsage{Keys: 1, Bytes: int64(len("jobs/web") + len("bob's"))}) {
		t.Errorf("bob's usage: %+v", u)
	}
}

// TestView_StoreList: a prefix, pages, and never another principal's keys,
// not even one whose name extends this one's.
func TestView_StoreList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, k := range []string{"a/1", "a/2", "a/3", "b/1", "a"} {
		h.must(CmdStorePut, put("al", k, k))
	}
	h.must(CmdStorePut, put("al2", "a/0", "x"))
	h.must(CmdStorePut, put("", "a/9", "anonymous"))
	keys := func(es []*StoreEntry) string {
		var out []string
		for _, e := range es {
			out = append(out, e.Key)
		}
		return strings.Join(out, ",")
	}
	v := h.view()
	if got, more := v.StoreList("al", "a/", "", 10); keys(got) != "a/1,a/2,a/3" || more {
		t.Errorf("prefix a/: %s %v", keys(got), more)
	}
	got, more := v.StoreList("al", "a/", "", 2)
	if keys(got) != "a/1,a/2" || !more {
		t.Errorf("first page: %s %v", keys(got), more)
	}
	if got, more = v.StoreList("al", "a/", "a/2", 2); keys(got) != "a/3" || more {
		t.Errorf("second page: %s %v", keys(got), more)
	}
	if got, _ := v.StoreList("al", "", "", 100); keys(got) != "a,a/1,a/2,a/3,b/1" {
		t.Errorf("everything of al: %s", keys(got))
	}
	if got, _ := v.StoreList("", "", "", 100); keys(got) != "a/9" {
		t.Errorf("the anonymous principal's: %s", keys(got))
	}
}

// TestState_Apply_storeLimits: bad keys, oversized values and a principal
// over its quota are refused with typed errors and change nothing.
func TestState_Apply_storeLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	big := strings.Repeat("v", MaxStoreValueSize)
	for _, tc := range []struct {
		name string
		body any
		typ  CmdType
		want error
	}{
		{"empty key", put("p", "", "x"), CmdStorePut, protocol.ErrInvalidArgument},
		{"long key", put("p", strings.Repeat("k", MaxStoreKeyLen+1), "x"), CmdStorePut, protocol.ErrInvalidArgument},
		{"control character", put("p", "a\x00b", "x"), CmdStorePut, protocol.ErrInvalidArgument},
		{"bad principal", put("no such/principal", "k", "x"), CmdStorePut, protocol.ErrInvalidArgument},
		{"value too large", put("p", "k", big+"v"), CmdStorePut, protocol.ErrTooLarge},
		{"create and revision", &StorePut{Principal: "p", Key: "k", Create: true, IfRevision: 3}, CmdStorePut, protocol.ErrInvalidArgument},
		{"delete, bad key", &StoreDelete{Principal: "p", Key: "\x7f"}, CmdStoreDelete, protocol.ErrInvalidArgument},
	} {
		if _, err := h.apply(tc.typ, tc.body); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if u := h.view().StoreUsage("p"); u != (StoreUsage{}) {
		t.Fatalf("refused writes left usage %+v", u)
	}
	// A value of exactly the limit is taken; the principal's bytes cap.
	n := 0
	var err error
	for ; n < 200 && err == nil; n++ {
		_, err = h.apply(CmdStorePut, put("p", fmt.Sprint("k", n), big))
	}
	if !errors.Is(err, protocol.ErrLimitExceeded) {
		t.Fatalf("after %d values of %d bytes: %v, want ErrLimitExceeded", n, MaxStoreValueSize, err)
	}
	u := h.view().StoreUsage("p")
	if u.Bytes > MaxStoreBytes || u.Keys != n-1 {
		t.Errorf("usage %+v after %d puts, limit %d bytes", u, n-1, MaxStoreBytes)
	}
	// Overwriting an entry counts its new size only.
	if _, err := h.apply(CmdStorePut, put("p", "k0", "small")); err != nil {
		t.Errorf("overwrite at the cap: %v", err)
	}
	// Another principal is not held by p's quota.
	if _, err := h.apply(CmdStorePut, put("q", "k", big)); err != nil {
		t.Errorf("another principal: %v", err)
	}
}

// TestState_storeSnapshot: the store survives a snapshot, usage included,
// and a snapshot with store entries out of order, or fewer than the end
// record counts, is refused.
func TestState_storeSnapshot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.must(CmdStorePut, put("alice", "k1", "one"))
	h.must(CmdStorePut, put("alice", "k2", "two"))
	h.must(CmdStorePut, put("bob", "k1", "b"))
	s := roundTrip(t, h.s)
	v := s.Snapshot()
	if e, ok := v.StoreGet("alice", "k2"); !ok || string(e.Value) != "two" {
		t.Errorf("after a snapshot: %+v %v", e, ok)
	}
	if u := v.StoreUsage("alice"); u != h.view().StoreUsage("alice") || u.Keys != 2 {
		t.Errorf("usage after a snapshot %+v, before %+v", u, h.view().StoreUsage("alice"))
	}
	if !bytes.Equal(snapshotBytes(t, v), snapshotBytes(t, h.view())) {
		t.Error("the restored state writes another snapshot")
	}
	e1 := &StoreEntry{Principal: "alice", Key: "k1", Value: []byte("x"), Revision: 3}
	e2 := &StoreEntry{Principal: "alice", Key: "k2", Value: []byte("y"), Revision: 4}
	end := func(n int) []byte { return rec(recEnd, endRecord{StoreEntries: n, Index: 9}) }
	for name, data := range map[string][]byte{
		"out of order": rebuild(1, rec(recStoreEntry, e2), rec(recStoreEntry, e1), end(2)),
		"repeated":     rebuild(1, rec(recStoreEntry, e1), rec(recStoreEntry, e1), end(1)),
		"count":        rebuild(1, rec(recStoreEntry, e1), end(2)),
		"no revision":  rebuild(1, rec(recStoreEntry, &StoreEntry{Principal: "a", Key: "k"}), end(1)),
		"bad key":      rebuild(1, rec(recStoreEntry, &StoreEntry{Principal: "a", Key: "", Revision: 1}), end(1)),
	} {
		if s, err := Restore(bytes.NewReader(data)); !errors.Is(err, ErrSnapshotCorrupt) || s != nil {
			t.Errorf("%s: %v, want ErrSnapshotCorrupt", name, err)
		}
	}
}
