package runner

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// openAs opens the local file path for reading with the permissions of
// cred (the agent's own without one). The open runs on a thread of its own
// whose file system IDs and groups are cred's: Linux keeps them per thread,
// and the kernel then checks every directory and the file as it would for
// the user. The thread is locked and never unlocked, so the runtime ends it
// with the goroutine and nothing else ever runs with its identity.
// O_NONBLOCK keeps a FIFO from blocking the open; the caller refuses
// anything but regular files.
func openAs(path string, cred *Credential) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if cred == nil || (cred.UID == uint32(os.Geteuid()) && cred.GID == uint32(os.Getegid())) {
		return os.OpenFile(path, flags, 0)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		if err := becomeFS(cred); err != nil {
			done <- result{err: err}
			return
		}
		f, err := os.OpenFile(path, flags, 0)
		done <- result{f, err}
	}()
	res := <-done
	return res.f, res.err
}

// becomeFS gives the calling thread cred's groups and file system IDs.
// Its real and effective IDs stay root's, so it could return; it never
// does (see openAs).
func becomeFS(cred *Credential) error {
	groups := make([]int, len(cred.Groups))
	for i, g := range cred.Groups {
		groups[i] = int(g)
	}
	if err := unix.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	// setfsgid and setfsuid report no error, only the previous ID: a second
	// call returns the ID the first one set, if it did.
	_ = unix.Setfsgid(int(cred.GID))
	if prev, _ := unix.SetfsgidRetGid(int(cred.GID)); prev != int(cred.GID) {
		return fmt.Errorf("setfsgid %d failed", cred.GID)
	}
	_ = unix.Setfsuid(int(cred.UID))
	if prev, _ := unix.SetfsuidRetUid(int(cred.UID)); prev != int(cred.UID) {
		return fmt.Errorf("setfsuid %d failed", cred.UID)
	}
	return nil
}
