//go:build !unix

package executor

import (
	"context"
	"fmt"
	"os"
	"time"
)

// lockWorkDir opens the lock file; this platform has no advisory locks, so
// nothing stops a second agent on the same work directory.
func lockWorkDir(_ context.Context, path string, _ time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return f, nil
}
