//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// asUser returns the credential of the user name, skipping the test
// unless it runs as root (only root switches users) and the user exists.
func asUser(t *testing.T, name string) *Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running tasks as another user needs root")
	}
	if _, err := user.Lookup(name); err != nil {
		t.Skipf("no user %q on this machine: %v", name, err)
	}
	c, err := LookupUser(name)
	if err != nil || c == nil {
		t.Fatalf("LookupUser(%q): %+v, %v", name, c, err)
	}
	return c
}

// owner returns the uid and gid owning path, not followed.
func owner(t *testing.T, path string) (uint32, uint32, os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode()
}

func TestLookupUser(t *testing.T) {
	t.Parallel()
	if c, err := LookupUser(""); c != nil || err != nil {
		t.Fatalf(`LookupUser(""): got %+v, %v; want the agent's own user (nil)`, c, err)
	}
	_, err := LookupUser("no-such-user-allot")
	if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), `"no-such-user-allot"`) {
		t.Fatalf("unknown user: got %v, want ErrInvalidSpec naming the user", err)
	}
	nobody := asUser(t, "nobody")
	u, _ := user.Lookup("nobody")
	if strconv.Itoa(int(nobody.UID)) != u.Uid || strconv.Itoa(int(nobody.GID)) != u.Gid || !slices.Contains(nobody.Groups, nobody.GID) {
		t.Fatalf("nobody: got %+v, want uid %s gid %s among its groups", nobody, u.Uid, u.Gid)
	}
}

// A task as a user runs with the user's IDs in a sandbox the user owns,
// mode 0700, where everything the runner put for it is the user's; its
// control directory stays root's, outside the sandbox.
func TestRunner_TaskAsUser(t *testing.T) {
	t.Parallel()
	nobody := asUser(t, "nobody")
	r := newRunner(t, testutil.TraversableTempDir(t))
	src := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(src, []byte("in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	s := shellSpec("as-nobody", `id -u > uid; id -g > gid; echo "$HOME" > home; cat data/input`)
	s.Command.User = "nobody"
	s.Command.URIs = []protocol.URI{{Value: "file://" + src, OutputFile: "data/input"}}
	if _, err := r.Prepare(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	task := start(t, r, s)
	if e := wait(t, task); code(e) != 0 {
		t.Fatalf("got %+v, want exit 0", e)
	}
	sb := task.Sandbox()
	for file, want := range map[string]string{
		"uid": strconv.Itoa(int(nobody.UID)), "gid": strconv.Itoa(int(nobody.GID)), "home": sb, stdoutFile: "in",
	} {
		if got, err := os.ReadFile(filepath.Join(sb, file)); err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("%s: got %q (%v), want %q", file, got, err, want)
		}
	}
	for _, p := range []string{sb, filepath.Join(sb, stdoutFile), filepath.Join(sb, stderrFile), filepath.Join(sb, "data"), filepath.Join(sb, "data/input")} {
		if uid, gid, _ := owner(t, p); uid != nobody.UID || gid != nobody.GID {
			t.Errorf("%s belongs to %d:%d, want %d:%d", p, uid, gid, nobody.UID, nobody.GID)
		}
	}
	if _, _, mode := owner(t, sb); mode.Perm() != 0o700 {
		t.Errorf("sandbox mode %v, want 0700", mode.Perm())
	}
	if _, _, mode := owner(t, r.workDir); mode.Perm() != 0o711 {
		t.Errorf("work dir mode %v, want 0711", mode.Perm())
	}
	if uid, _, mode := owner(t, task.ctl); uid != 0 || mode.Perm() != 0o700 || within(r.workDir, task.ctl) {
		t.Errorf("control dir %s: uid %d mode %v; want root's, 0700, outside the work dir", task.ctl, uid, mode.Perm())
	}
	if u := task.User(); u == nil || u.UID != nobody.UID {
		t.Errorf("Task.User: got %+v", u)
	}
	again, err := newRunner(t, r.workDir).Reattach(context.Background(), "as-nobody")
	if err != nil {
		t.Fatal(err)
	}
	if u := again.User(); u == nil || u.UID != nobody.UID || u.User != "nobody" {
		t.Errorf("reattached Task.User: got %+v", u)
	}
}

// A file URI is read as the task's user: what the user may not read is
// not fetched for it, though the agent could read it.
func TestRunner_FileURIReadAsUser(t *testing.T) {
	t.Parallel()
	asUser(t, "nobody")
	r := newRunner(t, testutil.TraversableTempDir(t))
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := uriSpec("secret", protocol.URI{Value: "file://" + secret})
	s.Command.User = "nobody"
	sandbox, err := r.Prepare(context.Background(), s)
	if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("got %v, want ErrFetch, permission denied", err)
	}
	if _, err := os.Lstat(filepath.Join(sandbox, "secret")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file was fetched: %v", err)
	}
	// The agent's own tasks still read what the agent reads.
	s.Name, s.Command.User = "secret-agent", ""
	if _, err := r.Prepare(context.Background(), s); err != nil {
		t.Fatalf("as the agent: %v", err)
	}
}

// A task cannot make the shim read or write through names in its sandbox:
// a symlink planted as stdout before the start is refused, and the stderr
// tail of a failed task comes from the file the task wrote, not from
// whatever the name points to at its end.
func TestRunner_UserOutputNotFollowed(t *testing.T) {
	t.Parallel()
	asUser(t, "nobody")
	r := newRunner(t, testutil.TraversableTempDir(t))
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root-only-content"), 0o600); err != nil {
		t.Fatal(err)
	}

	s := shellSpec("swap", `echo real-error >&2; rm -f stderr; ln -s `+secret+` stderr; exit 3`)
	s.Command.User = "nobody"
	e := wait(t, start(t, r, s))
	if code(e) != 3 || e.Message != "real-error" {
		t.Fatalf("got %+v, want exit 3 with the stderr the task wrote", e)
	}

	planted := shellSpec("planted", "echo hi")
	planted.Command.User = "nobody"
	sandbox, err := r.Prepare(context.Background(), planted)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(sandbox, stdoutFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start(context.Background(), planted); !errors.Is(err, ErrStart) {
		t.Fatalf("start with stdout a symlink: got %v, want ErrStart", err)
	}
	if data, _ := os.ReadFile(secret); string(data) != "root-only-content" {
		t.Fatalf("the symlink's target was written: %q", data)
	}
	if uid, _, _ := owner(t, secret); uid != 0 {
		t.Fatalf("the symlink's target was given to uid %d", uid)
	}
}

// Tasks of earlier versions kept their control directory in the sandbox;
// a task started there is found again, unless the sandbox belongs to a
// task's user, who could have written anything in it.
func TestRunner_ReattachLegacyControl(t *testing.T) {
	t.Parallel()
	r := newRunner(t, "")
	legacy := func(name string) string {
		dir := filepath.Join(r.workDir, name, legacyControlDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		three := 3
		for file, v := range map[string]any{
			specFile: shimSpec{TaskID: name}, shimFile: shimRecord{},
			exitFile: Exit{Code: &three, Message: "legacy"},
		} {
			if err := writeJSONAtomic(control(dir, file), v); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	legacy("old")
	task, err := r.Reattach(context.Background(), "old")
	if err != nil {
		t.Fatal(err)
	}
	if e, done := task.Exit(); !done || code(e) != 3 || e.Message != "legacy" {
		t.Fatalf("got %+v done %v, want the legacy record", e, done)
	}

	nobody := asUser(t, "nobody")
	legacy("forged")
	if err := os.Lchown(filepath.Join(r.workDir, "forged"), int(nobody.UID), int(nobody.GID)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reattach(context.Background(), "forged"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a user's sandbox with a control directory: got %v, want ErrNotFound", err)
	}
}

// Earlier versions left sandboxes readable by all, as their tasks all ran
// as the agent's user; a runner makes them private before it runs tasks as
// other users.
func TestNew_RestrictsLegacySandboxes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o755); err != nil {
		t.Fatal(err)
	}
	newRunner(t, dir)
	if _, _, mode := owner(t, old); mode.Perm() != 0o700 {
		t.Fatalf("an old sandbox has mode %v, want 0700", mode.Perm())
	}
}
