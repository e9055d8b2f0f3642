//go:build !unix

package devcluster

import "os"

// lockDataDir opens the lock file; this platform has no advisory locks, so
// nothing stops a second dev cluster on the same data directory.
func lockDataDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
