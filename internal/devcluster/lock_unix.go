//go:build unix

package devcluster

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDataDir takes an exclusive lock on path (DataDir/dev.lock), so two
// dev clusters never share a data directory. The lock goes with the
// returned file.
func lockDataDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by another allot dev", ErrLocked, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
