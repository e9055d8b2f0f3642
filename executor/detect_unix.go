//go:build unix

package executor

import "golang.org/x/sys/unix"

// diskFreeMiB returns the MiB available to unprivileged users in the file
// system holding dir.
func diskFreeMiB(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize) >> 20, nil
}
