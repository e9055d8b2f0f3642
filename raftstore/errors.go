package raftstore

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// Sentinel errors. Match them with errors.Is; the returned errors wrap them with context.
var (
	// ErrInvalidConfig is returned by Config.Validate and New for an unusable Config.
	ErrInvalidConfig = errors.New("raftstore: invalid config")

	// ErrNotLeader is returned by leader-only calls (Apply, Join, Remove) on a node that is
	// not the leader. The error is a *NotLeaderError, which names the leader if known.
	ErrNotLeader = errors.New("raftstore: not the leader")

	// ErrLeadershipLost means the node lost leadership after the command was handed to
	// Raft and before it committed. The command may or may not be applied in the end.
	ErrLeadershipLost = errors.New("raftstore: leadership lost while applying")

	// ErrShutdown is returned by calls on a node that is shut down or shutting down.
	ErrShutdown = errors.New("raftstore: node is shut down")

	// ErrTimeout means Config.ApplyTimeout (or Raft's enqueue timeout) elapsed. As with
	// any timeout, the command may still commit and be applied later.
	ErrTimeout = errors.New("raftstore: timed out")

	// ErrCorruptEntry means a Raft log entry is not a valid batch frame. The FSM goroutine
	// panics with an error wrapping it: the log is corrupt, and applying anything else
	// would let this replica diverge.
	ErrCorruptEntry = errors.New("raftstore: corrupt log entry")
)

// NotLeaderError is the error returned by leader-only calls on a follower or candidate.
// errors.Is(err, ErrNotLeader) holds for it, and so does errors.Is with the Raft error
// that caused it (usually raft.ErrNotLeader). LeaderID and LeaderAddr are empty when no
// leader is known, e.g. during an election.
type NotLeaderError struct {
	LeaderID   string
	LeaderAddr string
	// Cause is the underlying Raft error, if any.
	Cause error
}

// Error implements error.
func (e *NotLeaderError) Error() string {
	if e.LeaderID == "" {
		return "raftstore: not the leader (no leader known)"
	}
	return fmt.Sprintf("raftstore: not the leader (leader is %s at %s)", e.LeaderID, e.LeaderAddr)
}

// Unwrap returns ErrNotLeader and the Raft cause, so that errors.Is matches either.
func (e *NotLeaderError) Unwrap() []error {
	if e.Cause == nil {
		return []error{ErrNotLeader}
	}
	return []error{ErrNotLeader, e.Cause}
}

// translate maps an error from hashicorp/raft onto our sentinels, keeping the original in
// the chain. leader supplies the current leader for NotLeaderError.
func translate(err error, leader func() (string, string)) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		id, addr := leader()
		return &NotLeaderError{LeaderID: id, LeaderAddr: addr, Cause: err}
	case errors.Is(err, raft.ErrLeadershipLost):
		return fmt.Errorf("%w: %w", ErrLeadershipLost, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%w: %w", ErrShutdown, err)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	default:
		return err
	}
}
