package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/raft"
)

// identityFile names, in a node's data directory, the node ID the
// directory belongs to: a node started on another node's Raft state would
// vote and append as that node, and two such would split the cluster.
const identityFile = "node-id"

// claimDataDir records in dir that it is node id's, or refuses it when it
// is another node's.
func claimDataDir(dir, id string) error {
	path := filepath.Join(dir, identityFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if owner := strings.TrimSpace(string(data)); owner != id {
			return fmt.Errorf("%w: data directory %s holds the Raft state of node %q, not %q: start it with node ID %q, or give node %q a data directory of its own",
				ErrInvalidConfig, dir, owner, id, owner, id)
		}
		return nil
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		return os.WriteFile(path, []byte(id+"\n"), 0o600)
	default:
		return fmt.Errorf("data directory: %w", err)
	}
}

// peersDiffer says how the members of the Raft configuration n started
// with differ from the Peers it was given, or "" when they agree: Peers
// only bootstrap a new cluster, so on a restart they are ignored and
// membership changes go through Join and Remove.
func (n *Node) peersDiffer() string {
	f := n.raft.GetConfiguration()
	if f.Error() != nil || len(n.cfg.Peers) == 0 {
		return ""
	}
	var have, given []string
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			have = append(have, string(s.ID)+"@"+string(s.Address))
		}
	}
	for _, p := range n.cfg.Peers {
		given = append(given, p.ID+"@"+p.Address)
	}
	slices.Sort(have)
	slices.Sort(given)
	if len(have) == 0 || slices.Equal(have, given) {
		return ""
	}
	return fmt.Sprintf("the Raft state on disk has members %s, the peers given are %s", strings.Join(have, ", "), strings.Join(given, ", "))
}
