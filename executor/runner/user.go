package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Credential is a task's user as the agent resolved it when the task
// started: the shim runs the task's process with these IDs, and a
// restarted agent runs the task's health checks with the same ones even if
// the user database changed meanwhile.
type Credential struct {
	User   string   `json:"user"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// Sys returns the credential for syscall.SysProcAttr; nil (the caller's
// own identity) for a nil Credential.
func (c *Credential) Sys() *syscall.Credential {
	if c == nil {
		return nil
	}
	return &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}
}

// name is the user's name for logs; "" for the agent's own user.
func (c *Credential) name() string {
	if c == nil {
		return ""
	}
	return c.User
}

// LookupUser resolves the user a task is to run as, in the agent's user
// database; nil means the agent's own user, which "" names. An agent
// running as root may run tasks as any user it knows, with that user's
// primary group and supplementary groups; any other agent only as itself.
// Errors wrap ErrInvalidSpec: an unknown user, or one the agent cannot
// switch to.
func LookupUser(name string) (*Credential, error) {
	if name == "" {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		if u, err := user.Current(); err != nil || u.Username != name {
			return nil, fmt.Errorf("%w: running tasks as user %q needs an agent running as root", ErrInvalidSpec, name)
		}
		return nil, nil
	}
	u, err := user.Lookup(name)
	var unknown user.UnknownUserError
	if errors.As(err, &unknown) {
		return nil, fmt.Errorf("%w: user %q does not exist on this agent", ErrInvalidSpec, name)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: user %q: %w", ErrInvalidSpec, name, err)
	}
	c := &Credential{User: name}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: user %q: uid %q: %w", ErrInvalidSpec, name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: user %q: gid %q: %w", ErrInvalidSpec, name, u.Gid, err)
	}
	c.UID, c.GID = uint32(uid), uint32(gid)
	groups, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("%w: groups of user %q: %w", ErrInvalidSpec, name, err)
	}
	for _, g := range groups {
		if id, err := strconv.ParseUint(g, 10, 32); err == nil {
			c.Groups = append(c.Groups, uint32(id))
		}
	}
	return c, nil
}

// sandboxMode is the mode of every sandbox: its user's alone. Not 0750:
// the primary group of the users tasks run as is often shared by unrelated
// ones (nogroup), and the agent, which serves the files, needs no group.
const sandboxMode = 0o700

// handOver gives a sandbox the agent prepared to the task's user: every
// file in it, then the sandbox itself, is chowned to the user and its
// primary group. The agent's sandbox, mode 0700, admits nobody else while
// this walks it, so nothing in it can be swapped for a symlink that would
// lead the walk outside; a sandbox its user already owns is left as it is,
// since walking it would no longer be safe. Without a user (nil) the
// sandbox stays the agent's.
func handOver(sandbox string, cred *Credential) error {
	if cred == nil || int(cred.UID) == os.Geteuid() {
		return os.Chmod(sandbox, sandboxMode)
	}
	owner, err := ownerOf(sandbox)
	switch {
	case err != nil:
		return err
	case owner == cred.UID:
		return nil
	case int(owner) != os.Geteuid():
		return fmt.Errorf("%w: sandbox %s belongs to uid %d, not to the agent or to user %q", ErrInvalidSpec, filepath.Base(sandbox), owner, cred.User)
	}
	uid, gid := int(cred.UID), int(cred.GID)
	err = filepath.WalkDir(sandbox, func(p string, _ fs.DirEntry, err error) error {
		if err != nil || p == sandbox {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err == nil {
		err = os.Chmod(sandbox, sandboxMode)
	}
	if err == nil {
		err = os.Lchown(sandbox, uid, gid)
	}
	if err != nil {
		return fmt.Errorf("hand the sandbox to user %q: %w", cred.User, err)
	}
	return nil
}

// restrictSandboxes gives the sandboxes of the work directory that are
// still the agent's mode 0700, as earlier versions, whose tasks all ran as
// the agent's user, left them readable by all: tasks running as other
// users must not read them. It returns how many it changed.
func restrictSandboxes(workDir string) (int, error) {
	entries, err := os.ReadDir(workDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		p := filepath.Join(workDir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if owner, err := ownerOf(p); err != nil || int(owner) != os.Geteuid() {
			continue
		}
		if err := os.Chmod(p, sandboxMode); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// checkUnowned fails unless the sandbox is still the agent's (handOver
// has not given it away).
func checkUnowned(sandbox string) error {
	owner, err := ownerOf(sandbox)
	if err == nil && int(owner) != os.Geteuid() {
		err = fmt.Errorf("%w: sandbox %s already belongs to uid %d", ErrInvalidSpec, filepath.Base(sandbox), owner)
	}
	return err
}

// ownerOf returns the uid owning path, which is not followed if it is a
// symlink.
func ownerOf(path string) (uint32, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%w: no owner for %s", ErrUnsupported, path)
	}
	return st.Uid, nil
}
