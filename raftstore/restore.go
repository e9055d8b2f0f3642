package raftstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/hashicorp/raft"
)

// Restore replaces the cluster's state with data, a snapshot as the FSM's
// Snapshot writes it (a backup): the leader installs it as a new snapshot
// past the end of its log, restores its own FSM from it, and sends it to
// the followers, which do the same. Leader only. The caller must have
// checked that the FSM can read data: a snapshot it cannot restore would
// fail on every node.
func (n *Node) Restore(ctx context.Context, data []byte) error {
	if !n.IsLeader() {
		return n.notLeader()
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: int64(len(data))}
	if err := n.raft.Restore(meta, bytes.NewReader(data), n.enqueueTimeout(ctx)); err != nil {
		return fmt.Errorf("restore: %w", n.translate(err))
	}
	n.logger.Info("state restored from a snapshot", "bytes", len(data))
	return nil
}
