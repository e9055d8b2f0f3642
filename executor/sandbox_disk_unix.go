//go:build unix

package executor

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// diskUsageOf returns the file system holding dir, as df counts it.
func diskUsageOf(dir string) (diskUsage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return diskUsage{}, err
	}
	bs := int64(st.Bsize)
	return diskUsage{
		Total: int64(st.Blocks) * bs,
		Used:  (int64(st.Blocks) - int64(st.Bfree)) * bs,
		Avail: int64(st.Bavail) * bs,
	}, nil
}

// allocatedBytes is what a file takes on disk: its blocks, which a sparse
// file has fewer of than its size says.
func allocatedBytes(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
