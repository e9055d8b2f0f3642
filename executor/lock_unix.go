//go:build unix

package executor

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockWorkDir takes an exclusive lock on path (WorkDir/agent.lock), so two
// agents never share a checkpoint. The lock goes with the returned file.
func lockWorkDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("%w: lock %s: %w", ErrCheckpoint, path, err)
	}
	return f, nil
}
