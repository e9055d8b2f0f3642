package raftstore

import (
	"context"
	"fmt"

	"github.com/hashicorp/raft"
)

// Join adds node id at addr to the cluster as a voter. Leader only (a *NotLeaderError
// otherwise). The new node must already run (New without Bootstrap) with that ID and
// advertised address; the leader then sends it a snapshot and the log. Joining a member
// that is already a voter at addr is a no-op; a member known under the same ID or address
// but not both is removed first, which handles a node that restarted with a new address.
func (n *Node) Join(ctx context.Context, id, addr string) error {
	if id == "" || addr == "" {
		return fmt.Errorf("join: %w: id and address are required", ErrInvalidConfig)
	}
	if !n.IsLeader() {
		return n.notLeader()
	}
	servers, err := n.configuration(ctx)
	if err != nil {
		return fmt.Errorf("join %s: %w", id, err)
	}
	for _, s := range servers {
		sameID, sameAddr := s.ID == raft.ServerID(id), s.Address == raft.ServerAddress(addr)
		if sameID && sameAddr && s.Suffrage == raft.Voter {
			return nil
		}
		if sameID != sameAddr {
			n.logger.Info("removing stale member before join", "member_id", s.ID, "member_addr", s.Address,
				"join_id", id, "join_addr", addr)
			if err := n.wait(ctx, n.raft.RemoveServer(s.ID, 0, n.enqueueTimeout(ctx))); err != nil {
				return fmt.Errorf("join %s: remove stale member %s: %w", id, s.ID, err)
			}
		}
	}
	f := n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, n.enqueueTimeout(ctx))
	if err := n.wait(ctx, f); err != nil {
		return fmt.Errorf("join %s: %w", id, err)
	}
	n.logger.Info("member joined", "member_id", id, "member_addr", addr)
	return nil
}

// Remove takes node id out of the cluster. Leader only. Removing an unknown ID is a
// no-op. A removed node shuts its Raft server down when it learns of its removal.
func (n *Node) Remove(ctx context.Context, id string) error {
	if !n.IsLeader() {
		return n.notLeader()
	}
	f := n.raft.RemoveServer(raft.ServerID(id), 0, n.enqueueTimeout(ctx))
	if err := n.wait(ctx, f); err != nil {
		return fmt.Errorf("remove %s: %w", id, err)
	}
	n.logger.Info("member removed", "member_id", id)
	return nil
}

// Members returns the cluster's current members (voters and non-voters) as this node
// knows them, the latest configuration in its log, committed or not.
func (n *Node) Members(ctx context.Context) ([]Peer, error) {
	servers, err := n.configuration(ctx)
	if err != nil {
		return nil, err
	}
	peers := make([]Peer, len(servers))
	for i, s := range servers {
		peers[i] = Peer{ID: string(s.ID), Address: string(s.Address)}
	}
	return peers, nil
}

func (n *Node) configuration(ctx context.Context) ([]raft.Server, error) {
	f := n.raft.GetConfiguration()
	if err := n.wait(ctx, f); err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return f.Configuration().Servers, nil
}
