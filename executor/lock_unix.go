//go:build unix

package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockWorkDir takes an exclusive lock on path (WorkDir/agent.lock), so two
// agents never share a checkpoint. The lock goes with the returned file.
//
// A lock found taken is tried again for up to wait: a process forked
// anywhere in this one (a task's shim, say) holds every open file until it
// executes its program, and with it the lock of an agent that has just
// stopped, for a moment.
func lockWorkDir(ctx context.Context, path string, wait time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("%w: lock %s: %w", ErrCheckpoint, path, err)
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockRetryInterval):
		}
	}
}

// lockRetryInterval is how often a taken lock is tried again.
const lockRetryInterval = 10 * time.Millisecond
