package master

import (
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/raftstore"
)

// fsm applies committed commands to the replicated state. Raft calls it on
// one goroutine; readers take state.View snapshots, which never change.
type fsm struct {
	st     *state.State
	logger hclog.Logger
}

var _ raftstore.FSM = (*fsm)(nil)

func newFSM(logger hclog.Logger) *fsm {
	return &fsm{st: state.New(), logger: logger.Named("fsm")}
}

// applyResult is what one command's Apply returned; the leader gets it back
// from raftstore.Node.Apply.
type applyResult struct {
	Value any
	Err   error
}

// ApplyBatch applies one Raft entry's commands in order. A command that does
// not decode means the log is corrupt, which no replica can recover from,
// so it panics; domain errors are returned to the proposer.
func (f *fsm) ApplyBatch(index uint64, cmds [][]byte) []any {
	out := make([]any, len(cmds))
	for i, cmd := range cmds {
		v, err := f.st.Apply(index, cmd)
		if errors.Is(err, state.ErrCorrupt) {
			f.logger.Error("corrupt command in the log", "index", index, "position", i, "error", err)
			panic(fmt.Errorf("master: apply index %d command %d: %w", index, i, err))
		}
		out[i] = applyResult{Value: v, Err: err}
	}
	return out
}

// Snapshot captures an immutable view; Persist streams it while applies go on.
func (f *fsm) Snapshot() (raftstore.Snapshot, error) {
	return viewSnapshot{f.st.Snapshot()}, nil
}

// Restore replaces the state with a snapshot's.
func (f *fsm) Restore(r io.ReadCloser) error {
	if err := f.st.RestoreFrom(r); err != nil {
		return fmt.Errorf("restore state: %w", err)
	}
	return nil
}

// View returns the current read-only state.
func (f *fsm) View() *state.View { return f.st.Snapshot() }

type viewSnapshot struct{ v *state.View }

func (s viewSnapshot) Persist(w io.Writer) error {
	_, err := s.v.WriteTo(w)
	return err
}

func (viewSnapshot) Release() {}
