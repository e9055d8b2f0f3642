package raftstore

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

const (
	// logCacheSize is how many recent log entries are kept in memory, so that
	// replication to followers rarely reads the disk.
	logCacheSize = 512
	// tcpMaxPool is how many idle TCP connections the transport keeps per peer.
	tcpMaxPool = 3
	// tcpTimeout is the transport's I/O deadline (scaled up for snapshot transfers).
	tcpTimeout = 10 * time.Second
	// boltOpenTimeout bounds waiting for another process's lock on raft.db.
	boltOpenTimeout = 5 * time.Second
)

// stores is what a Raft server needs besides its FSM and configuration.
type stores struct {
	logs   raft.LogStore
	stable raft.StableStore
	snaps  raft.SnapshotStore
	trans  raft.Transport
	addr   raft.ServerAddress
	// closeStores releases the stores (not the transport: Raft's shutdown closes it).
	closeStores func() error
	// closeTransport closes the transport when Raft never took it over.
	closeTransport func() error
}

// openStores creates the stores and transport that cfg asks for.
func openStores(cfg Config, logger hclog.Logger) (*stores, error) {
	if cfg.InMemory {
		return openInmemStores(cfg), nil
	}
	return openDiskStores(cfg, logger)
}

func openInmemStores(cfg Config) *stores {
	addr := raft.ServerAddress(cfg.AdvertiseAddr)
	if addr == "" {
		addr = raft.ServerAddress(cfg.NodeID)
	}
	store := raft.NewInmemStore()
	trans := cfg.Network.attach(cfg.NodeID, addr)
	detach := func() error {
		cfg.Network.detach(cfg.NodeID, trans)
		return nil
	}
	return &stores{
		logs:           store,
		stable:         store,
		snaps:          &memSnapshotStore{},
		trans:          trans,
		addr:           addr,
		closeStores:    detach,
		closeTransport: detach,
	}
}

func openDiskStores(cfg Config, logger hclog.Logger) (*stores, error) {
	raftDir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft dir: %w", err)
	}
	format, err := logStoreFormat(raftDir, cfg.LogStore)
	if err != nil {
		return nil, err
	}
	durable, err := openLogStore(raftDir, format, logger)
	if err != nil {
		return nil, err
	}
	logger.Debug("raft log store", "format", format)
	logs, err := raft.NewLogCache(logCacheSize, durable)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create log cache: %w", err), durable.Close())
	}
	// The file snapshot store keeps its snapshots in DataDir/snapshots.
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.DataDir, cfg.SnapshotRetain, logger.Named("snapshots"))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open snapshot store: %w", err), durable.Close())
	}
	trans, err := newTCPTransport(cfg, logger)
	if err != nil {
		return nil, errors.Join(err, durable.Close())
	}
	stable := &closingStable{StableStore: durable}
	return &stores{
		logs:           logs,
		stable:         stable,
		snaps:          snaps,
		trans:          trans,
		addr:           trans.LocalAddr(),
		closeStores:    func() error { return stable.close(durable.Close) },
		closeTransport: trans.Close,
	}, nil
}

func newTCPTransport(cfg Config, logger hclog.Logger) (*raft.NetworkTransport, error) {
	var advertise net.Addr
	if cfg.AdvertiseAddr != "" {
		addr, err := net.ResolveTCPAddr("tcp", cfg.AdvertiseAddr)
		if err != nil {
			return nil, fmt.Errorf("resolve advertise addr %q: %w", cfg.AdvertiseAddr, err)
		}
		advertise = addr
	}
	streams, err := listenStreams(cfg.BindAddr, advertise)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.BindAddr, err)
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  streams,
		MaxPool: tcpMaxPool,
		Timeout: tcpTimeout,
		Logger:  logger.Named("transport"),
	}), nil
}
