package raftstore

import (
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Peer is one voting member of the Raft cluster.
type Peer struct {
	// ID is the member's unique, permanent node ID (Config.NodeID on that node).
	ID string
	// Address is the member's advertised Raft address: host:port for TCP, or its
	// InmemNetwork address (its node ID by default) in memory.
	Address string
}

// Config configures a Node. Start from DefaultConfig and set at least NodeID and, for a
// durable node, DataDir; for a cluster, also Peers and Bootstrap on first start.
type Config struct {
	// NodeID is this node's unique and permanent ID. Required.
	NodeID string

	// DataDir holds the Raft log and stable store (DataDir/raft) and snapshots
	// (DataDir/snapshots). Required unless InMemory.
	DataDir string

	// BindAddr is the TCP listen address for Raft traffic (host:port; port 0 picks a free
	// port). Ignored when InMemory.
	BindAddr string

	// AdvertiseAddr is the address peers use to reach this node. Empty means the
	// listener's address, which must then be a specific IP (not 0.0.0.0). In memory, it
	// names this node on the InmemNetwork and defaults to NodeID.
	AdvertiseAddr string

	// Peers lists every voter of a new cluster, this node included (with its advertised
	// address). Used only by Bootstrap.
	Peers []Peer

	// Bootstrap makes a node with no Raft state on disk create a new cluster from Peers
	// (just itself if Peers is empty). With existing state it is a no-op, so it can stay
	// on across restarts. Every member of a new cluster bootstraps with the same Peers.
	// A node that will Join a running cluster must not bootstrap.
	Bootstrap bool

	// InMemory keeps the log, stable and snapshot stores in memory and attaches the
	// transport to Network. For tests; nothing survives Shutdown.
	InMemory bool

	// Network is the shared in-memory network. Required when InMemory.
	Network *InmemNetwork

	// Logger receives the node's logs; raftstore derives Named sub-loggers from it.
	// Nil discards logs.
	Logger hclog.Logger

	// HeartbeatTimeout is how long a follower waits without contact from the leader
	// before it starts an election.
	HeartbeatTimeout time.Duration
	// ElectionTimeout is how long a candidate waits before starting a new election.
	// At least HeartbeatTimeout.
	ElectionTimeout time.Duration
	// LeaderLeaseTimeout is how long a leader stays leader without reaching a quorum.
	// At most HeartbeatTimeout.
	LeaderLeaseTimeout time.Duration
	// CommitTimeout is how long the leader waits, without new entries, before it sends
	// followers the latest commit index.
	CommitTimeout time.Duration

	// SnapshotThreshold is the number of log entries since the last snapshot after which
	// Raft takes a snapshot (checked every SnapshotInterval).
	SnapshotThreshold uint64
	// SnapshotInterval is how often Raft checks SnapshotThreshold (randomly staggered up
	// to twice this).
	SnapshotInterval time.Duration
	// SnapshotRetain is how many snapshots to keep on disk.
	SnapshotRetain int
	// LogStore is the durable log's format: LogStoreWAL, LogStoreBoltDB, or empty for
	// the one DataDir already holds (a new data directory gets LogStoreWAL).
	LogStore string
	// TrailingLogs is how many log entries to keep after a snapshot, so that a follower
	// that is slightly behind catches up from the log instead of a whole snapshot.
	TrailingLogs uint64

	// MaxBatch is the most commands that group commit packs into one Raft log entry.
	MaxBatch int
	// MaxBatchBytes caps the encoded size of one batch entry. A single command larger
	// than this still goes out, alone in its entry.
	MaxBatchBytes int
	// MaxInFlight is how many batch entries may be handed to Raft and not yet applied
	// at the same time (pipelining).
	MaxInFlight int
	// ApplyTimeout bounds one Apply call from enqueue to result, on top of the caller's
	// context. Zero means only the context bounds it.
	ApplyTimeout time.Duration
}

// DefaultConfig returns a Config with defaults suited to three masters on a LAN. The
// caller still sets NodeID, DataDir, addresses, Peers and Bootstrap.
func DefaultConfig() Config {
	return Config{
		BindAddr:           "127.0.0.1:7000",
		HeartbeatTimeout:   500 * time.Millisecond,
		ElectionTimeout:    500 * time.Millisecond,
		LeaderLeaseTimeout: 450 * time.Millisecond,
		CommitTimeout:      50 * time.Millisecond,
		SnapshotThreshold:  8192,
		SnapshotInterval:   120 * time.Second,
		SnapshotRetain:     2,
		TrailingLogs:       10240,
		MaxBatch:           512,
		MaxBatchBytes:      raft.SuggestedMaxDataSize,
		MaxInFlight:        4,
		ApplyTimeout:       30 * time.Second,
	}
}

// Validate reports the first problem with c as an error wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	if c.NodeID == "" {
		return invalid("node id is empty")
	}
	if c.InMemory {
		if c.Network == nil {
			return invalid("in-memory node needs a network")
		}
	} else if err := c.validateDurable(); err != nil {
		return err
	}
	if err := c.validateTimings(); err != nil {
		return err
	}
	if c.MaxBatch < 1 {
		return invalid("max batch %d: must be at least 1", c.MaxBatch)
	}
	if c.MaxBatchBytes < 1 {
		return invalid("max batch bytes %d: must be at least 1", c.MaxBatchBytes)
	}
	if c.MaxInFlight < 1 {
		return invalid("max in flight %d: must be at least 1", c.MaxInFlight)
	}
	if c.SnapshotRetain < 1 {
		return invalid("snapshot retain %d: must be at least 1", c.SnapshotRetain)
	}
	return c.validatePeers()
}

func (c Config) validateDurable() error {
	if c.DataDir == "" {
		return invalid("data dir is empty")
	}
	if _, _, err := net.SplitHostPort(c.BindAddr); err != nil {
		return invalid("bind addr %q: %v", c.BindAddr, err)
	}
	switch c.LogStore {
	case "", LogStoreWAL, LogStoreBoltDB:
	default:
		return invalid("log store %q: want %q or %q", c.LogStore, LogStoreWAL, LogStoreBoltDB)
	}
	if c.AdvertiseAddr != "" {
		host, _, err := net.SplitHostPort(c.AdvertiseAddr)
		if err != nil {
			return invalid("advertise addr %q: %v", c.AdvertiseAddr, err)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			return invalid("advertise addr %q is not reachable by peers", c.AdvertiseAddr)
		}
	}
	return nil
}

func (c Config) validateTimings() error {
	const floor = 5 * time.Millisecond
	switch {
	case c.HeartbeatTimeout < floor:
		return invalid("heartbeat timeout %s: must be at least %s", c.HeartbeatTimeout, floor)
	case c.ElectionTimeout < c.HeartbeatTimeout:
		return invalid("election timeout %s: must be at least the heartbeat timeout %s",
			c.ElectionTimeout, c.HeartbeatTimeout)
	case c.LeaderLeaseTimeout < floor || c.LeaderLeaseTimeout > c.HeartbeatTimeout:
		return invalid("leader lease timeout %s: must be between %s and the heartbeat timeout %s",
			c.LeaderLeaseTimeout, floor, c.HeartbeatTimeout)
	case c.CommitTimeout < time.Millisecond:
		return invalid("commit timeout %s: must be at least 1ms", c.CommitTimeout)
	case c.SnapshotInterval < floor:
		return invalid("snapshot interval %s: must be at least %s", c.SnapshotInterval, floor)
	case c.ApplyTimeout < 0:
		return invalid("apply timeout %s: must not be negative", c.ApplyTimeout)
	}
	return nil
}

func (c Config) validatePeers() error {
	ids := make(map[string]bool, len(c.Peers))
	addrs := make(map[string]bool, len(c.Peers))
	for _, p := range c.Peers {
		if p.ID == "" || p.Address == "" {
			return invalid("peer %q at %q: id and address are required", p.ID, p.Address)
		}
		if ids[p.ID] {
			return invalid("peer id %q listed twice", p.ID)
		}
		if addrs[p.Address] {
			return invalid("peer address %q listed twice", p.Address)
		}
		ids[p.ID], addrs[p.Address] = true, true
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// raftConfig translates c into hashicorp/raft's configuration.
func (c Config) raftConfig(logger hclog.Logger, notify chan<- bool) (*raft.Config, error) {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(c.NodeID)
	rc.HeartbeatTimeout = c.HeartbeatTimeout
	rc.ElectionTimeout = c.ElectionTimeout
	rc.LeaderLeaseTimeout = c.LeaderLeaseTimeout
	rc.CommitTimeout = c.CommitTimeout
	rc.SnapshotThreshold = c.SnapshotThreshold
	rc.SnapshotInterval = c.SnapshotInterval
	rc.TrailingLogs = c.TrailingLogs
	// The leader buffers Apply calls and writes all that are waiting with one disk sync,
	// so pipelined batch entries share a sync too. Our own timeouts bound callers.
	rc.BatchApplyCh = true
	rc.NotifyCh = notify
	rc.Logger = logger
	rc.NoLegacyTelemetry = true
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return rc, nil
}
