//go:build linux

package runner

import (
	"fmt"
	"os"
	"syscall"
)

// openOutput opens the task's output file name (stdout, stderr) at the top
// of its sandbox for the task to append to, creating it if needed, and
// gives it to the task's user. The shim opens it as root in a directory the
// task's user owns, where anything may have been put meanwhile (by another
// task of the same user), so it refuses what would hand the task a file
// that is not its own: a symlink (not followed), a FIFO or device, or a
// hard link to a file elsewhere. It is opened for reading too, so that the
// shim reads the end of stderr from the file the task wrote, whatever the
// task did to the name since.
func openOutput(sandbox, name string, cred *Credential) (*os.File, error) {
	path := sandbox + string(os.PathSeparator) + name
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the task's %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.Mode().IsRegular() || !ok || st.Nlink != 1 {
			err = fmt.Errorf("the task's %s is not a regular file of its own", name)
		}
	}
	if err == nil && cred != nil {
		err = f.Chown(int(cred.UID), int(cred.GID))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
