package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// What the sandbox collector does on disk. A task owns its sandbox and
// may have left anything there: symbolic links to anywhere, directories
// it made unreadable, processes still writing. So every operation goes
// through an os.Root opened on sandboxes/, which resolves no path out of
// it, and nothing here follows a symbolic link: a link's target is never
// measured, changed or removed.

// validSandboxName reports whether name, an entry of sandboxes/, can be a
// sandbox the agent made: "<framework>_<task>" (sandboxName), of the
// characters IDs allow, not hidden. Anything else there is not the
// agent's, and the collector leaves it alone.
func validSandboxName(name string) bool {
	if name == "" || len(name) > runner.MaxNameLen || name[0] == '.' {
		return false
	}
	i := strings.IndexByte(name, '_')
	if i <= 0 || i == len(name)-1 {
		return false
	}
	// Each part is at most MaxIDLen long (sandboxName), so the parts
	// check the characters.
	for _, part := range strings.Split(name, "_") {
		if part != "" && !protocol.ValidID(part) {
			return false
		}
	}
	return true
}

// frameworkOfName returns the framework a sandbox name starts with. The
// masters' framework IDs hold no '_' (protocol.NewFrameworkID), so the
// name's first part is its framework; a framework ID shortened in a long
// name (sandboxName) does not match any, and is taken as live.
func frameworkOfName(name string) protocol.FrameworkID {
	fw, _, _ := strings.Cut(name, "_")
	return protocol.FrameworkID(fw)
}

// diskSize returns the bytes the sandbox name takes on disk as du counts
// them: the blocks of every file and directory in it, symbolic links
// counted as themselves. What cannot be read (a directory its task made
// unreadable, to an agent that is not root) is left out.
func diskSize(root *os.Root, name string) int64 {
	var n int64
	_ = fs.WalkDir(root.FS(), name, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d == nil {
			return nil // unreadable: skipped, the walk goes on
		}
		if fi, err := d.Info(); err == nil {
			n += allocatedBytes(fi)
		}
		return nil
	})
	return n
}

// removeSandbox removes the sandbox name and everything in it. It removes
// a directory only (never what a symbolic link in its place points to),
// and a sandbox already gone is no error. A task may have left
// directories without write or search permission for the owner, which
// would make the removal fail for an agent that is not root: those are
// given back to their owner (mode 0700), then the removal is tried again.
func removeSandbox(root *os.Root, name string) error {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("sandbox %s is not a directory", name)
	}
	if root.RemoveAll(name) == nil {
		return nil
	}
	makeWritable(root, name)
	return root.RemoveAll(name)
}

// makeWritable sets mode 0700 on every directory under dir, parents
// before children so that each can then be read. Entries are not
// followed: fs.WalkDir reports a symbolic link as a link, and the root
// keeps a link swapped in meanwhile from leading out of sandboxes/.
func makeWritable(root *os.Root, dir string) {
	_ = fs.WalkDir(root.FS(), dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d != nil && d.IsDir() {
			_ = root.Chmod(path, 0o700)
		}
		return nil
	})
}

// endedOnDisk is when the task of a sandbox the agent has no record of
// ended, as well as the disk tells: its control directory's last change
// (the shim's exit record is its last write), else the sandbox's, never
// later than now. The control directory is the agent's own; the sandbox's
// time is the task's to set, hence the bound.
func endedOnDisk(root *os.Root, controlDir, name string, now time.Time) time.Time {
	var t time.Time
	if fi, err := os.Lstat(filepath.Join(controlDir, name)); err == nil && fi.IsDir() {
		t = fi.ModTime()
	} else if fi, err := root.Lstat(name); err == nil {
		t = fi.ModTime()
	}
	if t.IsZero() || t.After(now) {
		return now
	}
	return t
}
