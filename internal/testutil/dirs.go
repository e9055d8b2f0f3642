package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TraversableTempDir returns a fresh temporary directory that other users
// can reach (but not list the parent of): t.TempDir makes the test's
// directory above it mode 0700, which tasks running as other users could
// not pass through to their sandboxes.
func TraversableTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}
