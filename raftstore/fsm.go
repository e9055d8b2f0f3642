package raftstore

import (
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// FSM is the replicated state machine that a Node drives. The master implements it over
// its state; raftstore never looks inside a command.
//
// Concurrency: ApplyBatch, Snapshot and Restore are called from one goroutine, Raft's
// FSM goroutine, one at a time and never concurrently with each other. Snapshot.Persist
// runs on another goroutine while ApplyBatch goes on, so the state captured by Snapshot
// must not change under Persist (copy-on-write, an immutable view, or a copy).
type FSM interface {
	// ApplyBatch applies the commands of one committed Raft log entry, in order, and
	// returns one result per command (len(result) == len(cmds)); the leader hands
	// result[i] to the Apply call that submitted cmds[i]. index is the entry's Raft log
	// index; it increases with every call, and every command of the entry shares it.
	//
	// ApplyBatch must be deterministic: the same commands on the same state give the
	// same state and results on every replica, so no clock, randomness or I/O (the
	// leader stamps times and IDs into commands). Domain failures are results (for
	// example an error value), never panics. cmds alias the log entry: ApplyBatch may
	// keep them but must not modify them.
	ApplyBatch(index uint64, cmds [][]byte) []any

	// Snapshot captures the current state cheaply (a pointer to an immutable view, not
	// a serialization) and returns it for Persist. ApplyBatch is paused while it runs.
	Snapshot() (Snapshot, error)

	// Restore replaces all state with the snapshot read from r (written by
	// Snapshot.Persist, possibly on another replica and by an older version). It must
	// discard the previous state first. raftstore closes r after Restore returns.
	Restore(r io.ReadCloser) error
}

// Snapshot is a point-in-time view of the FSM, returned by FSM.Snapshot.
type Snapshot interface {
	// Persist writes the snapshot to w. It runs concurrently with ApplyBatch, must not
	// close w, and returns an error to abandon the snapshot. It may not be called at all.
	Persist(w io.Writer) error

	// Release is called exactly once when Raft is done with the snapshot, whether or not
	// Persist ran or succeeded.
	Release()
}

// applyResults is what the FSM adapter returns to Raft for one batch entry: one result
// per command, in frame order.
type applyResults []any

// fsmAdapter turns our FSM into a raft.FSM: it decodes batch frames and wraps snapshots.
type fsmAdapter struct {
	fsm    FSM
	logger hclog.Logger
}

var (
	_ raft.FSM         = (*fsmAdapter)(nil)
	_ raft.FSMSnapshot = (*snapshotAdapter)(nil)
)

// Apply implements raft.FSM. A frame that does not decode panics: the log is corrupt.
func (a *fsmAdapter) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	cmds, err := decodeFrame(l.Data)
	if err != nil {
		a.logger.Error("corrupt log entry", "index", l.Index, "term", l.Term, "error", err)
		panic(fmt.Errorf("raftstore: apply index %d: %w", l.Index, err))
	}
	results := a.fsm.ApplyBatch(l.Index, cmds)
	if len(results) != len(cmds) {
		a.logger.Error("fsm returned the wrong number of results",
			"index", l.Index, "commands", len(cmds), "results", len(results))
		fixed := make([]any, len(cmds))
		copy(fixed, results)
		results = fixed
	}
	return applyResults(results)
}

// Snapshot implements raft.FSM.
func (a *fsmAdapter) Snapshot() (raft.FSMSnapshot, error) {
	s, err := a.fsm.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("fsm snapshot: %w", err)
	}
	return &snapshotAdapter{snap: s}, nil
}

// Restore implements raft.FSM.
func (a *fsmAdapter) Restore(r io.ReadCloser) error {
	defer r.Close()
	if err := a.fsm.Restore(r); err != nil {
		return fmt.Errorf("fsm restore: %w", err)
	}
	return nil
}

// snapshotAdapter turns our Snapshot into a raft.FSMSnapshot.
type snapshotAdapter struct {
	snap Snapshot
}

// Persist implements raft.FSMSnapshot: it closes the sink on success and cancels it
// on failure.
func (s *snapshotAdapter) Persist(sink raft.SnapshotSink) error {
	if err := s.snap.Persist(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("close snapshot: %w", err)
	}
	return nil
}

// Release implements raft.FSMSnapshot.
func (s *snapshotAdapter) Release() {
	s.snap.Release()
}
