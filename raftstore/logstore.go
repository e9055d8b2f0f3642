package raftstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// The durable log's formats (docs/raftstore.md, "The log on disk"). A WAL appends each
// batch of entries to a segment file and syncs it once; BoltDB writes them into a
// copy-on-write B+tree and syncs twice (its pages, then its meta page), with more work
// per commit on the leader's and a follower's core, which on a loaded machine is most of
// a commit's tail.
const (
	LogStoreWAL    = "wal"
	LogStoreBoltDB = "boltdb"
)

// Where each format keeps its files under DataDir/raft.
const (
	boltFile = "raft.db"
	walDir   = "wal"
	walMeta  = "wal-meta.db"
)

// ErrLogStoreMismatch: the data directory holds a log of another format than the one
// asked for. Opening the asked one would start from an empty log and forget the node's
// term and vote, so the node refuses to start instead.
var ErrLogStoreMismatch = errors.New("raftstore: the data directory holds a log of another format")

// logStoreFormat is the format to open in raftDir: the one the directory holds, which
// must be the one asked for if any was; a directory without a log gets the one asked
// for, or LogStoreWAL, which commits in a third of bolt's time on a loaded machine
// (docs/raftstore.md, "The log on disk"). A directory created with bolt keeps it.
func logStoreFormat(raftDir, asked string) (string, error) {
	hasBolt, err := exists(filepath.Join(raftDir, boltFile))
	if err != nil {
		return "", err
	}
	hasWAL, err := exists(filepath.Join(raftDir, walDir, walMeta))
	if err != nil {
		return "", err
	}
	var held string
	switch {
	case hasBolt && hasWAL:
		return "", fmt.Errorf("%w: %s holds both %s and %s; move the one not in use aside", ErrLogStoreMismatch, raftDir, boltFile, walDir)
	case hasBolt:
		held = LogStoreBoltDB
	case hasWAL:
		held = LogStoreWAL
	}
	switch {
	case held == "" && asked == "":
		return LogStoreWAL, nil
	case held == "":
		return asked, nil
	case asked != "" && asked != held:
		return "", fmt.Errorf("%w: %s holds a %s log, %s was asked for (to change it, move the data directory aside and let the node catch up from the leader)",
			ErrLogStoreMismatch, raftDir, held, asked)
	}
	return held, nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// logStore is a durable log and the stable store beside it.
type logStore interface {
	raft.LogStore
	raft.StableStore
	Close() error
}

// openLogStore opens the log store of format in raftDir.
func openLogStore(raftDir, format string, logger hclog.Logger) (logStore, error) {
	if format == LogStoreBoltDB {
		bolt, err := raftboltdb.New(raftboltdb.Options{
			Path: filepath.Join(raftDir, boltFile),
			BoltOptions: &bbolt.Options{
				Timeout: boltOpenTimeout,
				// Do not write the freelist on every commit: it is rebuilt on open instead.
				// This keeps commits cheap after bursts leave many free pages (Nomad's
				// raft_boltdb.no_freelist_sync).
				NoFreelistSync: true,
			},
		})
		if err != nil {
			return nil, fmt.Errorf("open raft log store (%s): %w", format, err)
		}
		return bolt, nil
	}
	return openWAL(filepath.Join(raftDir, walDir), logger)
}
