package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/go-hclog"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// walStore is raft-wal's log with what its Close leaves open: its meta
// database (whose lock a node restarted in the same process would wait on
// forever) and a lock on the directory, so that a second process given the
// same data directory is refused at once rather than left waiting.
type walStore struct {
	*wal.WAL
	meta *metadb.BoltMetaDB
	lock *os.File
}

// ErrDataDirInUse: another node, in this process or another, has the log open.
var ErrDataDirInUse = errors.New("raftstore: the data directory's log is in use")

func openWAL(dir string, logger hclog.Logger) (*walStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create wal dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithMetaStore(meta), wal.WithLogger(logger.Named("wal")))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open raft log store (%s): %w", LogStoreWAL, err), meta.Close(), lock.Close())
	}
	return &walStore{WAL: w, meta: meta, lock: lock}, nil
}

// Close closes the log, then its meta database, then gives up the lock.
func (s *walStore) Close() error {
	return errors.Join(s.WAL.Close(), s.meta.Close(), s.lock.Close())
}

// lockDir takes an exclusive lock on dir's LOCK file, held until the file
// is closed.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrDataDirInUse, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return f, nil
}
