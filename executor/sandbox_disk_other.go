//go:build !unix

package executor

import "io/fs"

// diskUsageOf is not known on this platform: only the budget applies.
func diskUsageOf(string) (diskUsage, error) { return diskUsage{}, nil }

// allocatedBytes is a file's size where its blocks are not known.
func allocatedBytes(fi fs.FileInfo) int64 { return fi.Size() }
