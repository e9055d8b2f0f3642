package master

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

func TestFSM_ApplyBatchAndSnapshot(t *testing.T) {
	t.Parallel()
	f := newFSM(testlog.New(t))
	reg, err := state.Encode(state.CmdRegisterFramework, state.RegisterFramework{
		ID: "fw-1", Name: "wc", Principal: "alice", Role: "eng", Time: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	dup := append([]byte(nil), reg...)
	res := f.ApplyBatch(7, [][]byte{reg, dup})
	if got := res[0].(applyResult); got.Err != nil {
		t.Fatalf("first register: got %v, want success", got.Err)
	}
	if got := res[1].(applyResult); !errors.Is(got.Err, protocol.ErrDuplicate) {
		t.Errorf("second register without resubscribe: got %v, want ErrDuplicate", got.Err)
	}
	if _, ok := f.View().Framework("fw-1"); !ok || f.View().Index() != 7 {
		t.Fatalf("framework missing or index %d, want 7", f.View().Index())
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := snap.Persist(&buf); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	g := newFSM(testlog.New(t))
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.View().Framework("fw-1"); !ok || g.View().Index() != 7 {
		t.Fatalf("restored state lost the framework or index (%d)", g.View().Index())
	}
}

func TestFSM_CorruptCommandPanics(t *testing.T) {
	t.Parallel()
	f := newFSM(testlog.New(t))
	defer func() {
		if recover() == nil {
			t.Fatal("got no panic for a corrupt command, want one")
		}
	}()
	f.ApplyBatch(1, [][]byte{{byte(state.CmdRegisterFramework), 0xc1}})
}
