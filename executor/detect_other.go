//go:build !unix

package executor

// diskFreeMiB is not known on this platform; no disk is reported.
func diskFreeMiB(string) (int64, error) { return 0, nil }
