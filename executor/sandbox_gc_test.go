//go:build linux

package executor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// mkfile writes size bytes to path, making its directory.
func mkfile(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestValidSandboxName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"fw-1_task-1": true, "fw-1_a_b": true, "fw-1_t_" + strings.Repeat("A", 26): true,
		"": false, "noframework": false, "_t": false, "fw_": false, ".fw_t": false, "fw_t x": false,
		"fw_t/..": false, strings.Repeat("a", 300) + "_t": false,
	} {
		if got := validSandboxName(name); got != want {
			t.Errorf("validSandboxName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRemoveSandbox_hostile: what a task leaves in its sandbox cannot make
// the agent remove, or fail to remove, anything else: links out of the
// sandbox are removed as links (their targets survive), a link in place
// of a sandbox is refused, and directories without permissions are
// removed all the same.
func TestRemoveSandbox_hostile(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	mkfile(t, filepath.Join(outside, "secret"), 10)
	mkfile(t, filepath.Join(outside, "dir", "file"), 10)
	rootDir := t.TempDir()
	sb := filepath.Join(rootDir, "fw-a_t1")
	mkfile(t, filepath.Join(sb, "out"), 100)
	mkfile(t, filepath.Join(sb, "locked", "deeper", "file"), 100)
	for link, target := range map[string]string{"to-file": "secret", "to-dir": "dir"} {
		if err := os.Symlink(filepath.Join(outside, target), filepath.Join(sb, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"locked/deeper", "locked"} {
		if err := os.Chmod(filepath.Join(sb, d), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(rootDir, "fw-a_t2")); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, rootDir)

	if err := removeSandbox(root, "fw-a_t1"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if exists(sb) {
		t.Error("the sandbox is still there")
	}
	if err := removeSandbox(root, "fw-a_t2"); err == nil {
		t.Error("a symbolic link in place of a sandbox was removed as one")
	}
	for _, p := range []string{"secret", "dir/file"} {
		if data, err := os.ReadFile(filepath.Join(outside, p)); err != nil || len(data) != 10 {
			t.Errorf("%s outside the sandbox: %d bytes, %v; want it intact", p, len(data), err)
		}
	}
	if !exists(filepath.Join(rootDir, "fw-a_t2")) {
		t.Error("the link in place of a sandbox was removed")
	}
	if err := removeSandbox(root, "fw-a_t1"); err != nil {
		t.Errorf("removing a sandbox already gone: %v", err)
	}
}

// TestMakeWritable: directories a task left without permissions get them
// back, parents before children; links are not followed.
func TestMakeWritable(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	if err := os.Chmod(outside, 0o500); err != nil {
		t.Fatal(err)
	}
	rootDir := t.TempDir()
	mkfile(t, filepath.Join(rootDir, "fw_t", "a", "b", "f"), 1)
	if err := os.Symlink(outside, filepath.Join(rootDir, "fw_t", "link")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"fw_t/a/b", "fw_t/a"} {
		if err := os.Chmod(filepath.Join(rootDir, d), 0); err != nil {
			t.Fatal(err)
		}
	}
	makeWritable(openRoot(t, rootDir), "fw_t")
	for _, d := range []string{"fw_t/a", "fw_t/a/b"} {
		if fi, err := os.Stat(filepath.Join(rootDir, d)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", d, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("the link's target: %v, %v; want it untouched (0500)", fi.Mode(), err)
	}
}

// TestDiskSize counts a sandbox's own blocks, not what its links point to.
func TestDiskSize(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	mkfile(t, filepath.Join(outside, "big"), 1<<20)
	rootDir := t.TempDir()
	mkfile(t, filepath.Join(rootDir, "fw_t", "sub", "f"), 100_000)
	if err := os.Symlink(filepath.Join(outside, "big"), filepath.Join(rootDir, "fw_t", "link")); err != nil {
		t.Fatal(err)
	}
	if n := diskSize(openRoot(t, rootDir), "fw_t"); n < 100_000 || n >= 1<<20 {
		t.Fatalf("size %d, want the 100 kB file's blocks and not the linked 1 MiB", n)
	}
}

// gcWorkDir is a work directory with sandboxes/ and control/.
func gcWorkDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{sandboxDir, controlDir} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// touchAt makes the directory dir/name with a file of size bytes and sets
// its time.
func touchAt(t *testing.T, dir, name string, size int, at time.Time) {
	t.Helper()
	mkfile(t, filepath.Join(dir, name, "out"), size)
	if err := os.Chtimes(filepath.Join(dir, name), at, at); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxGC_afterRestart: sandboxes a restarted agent finds on disk
// without a record count as ended when their shim's records (else they)
// last changed, never later than now; their frameworks are live unless
// the agent was told before the restart that they are gone, which it
// remembers. Entries that are not sandboxes are left alone.
func TestSandboxGC_afterRestart(t *testing.T) {
	t.Parallel()
	dir := gcWorkDir(t)
	cfg := Config{WorkDir: dir, GCDelay: time.Hour, GCDiskThreshold: 1, GCDiskBudget: 1}
	before := newSandboxGC(cfg, testlog.New(t))
	before.load()
	before.frameworkGone("fw-gone")
	before.frameworkGone("fw-back")
	before.frameworkLaunched("fw-back")

	now := time.Now()
	sb, ctl := filepath.Join(dir, sandboxDir), filepath.Join(dir, controlDir)
	touchAt(t, sb, "fw-gone_t1", 1000, now.Add(-2*time.Minute))
	touchAt(t, ctl, "fw-gone_t1", 10, now.Add(-2*time.Minute))
	touchAt(t, sb, "fw-back_t1", 1000, now.Add(-time.Minute))
	touchAt(t, sb, "fw-live_old", 1000, now.Add(-2*time.Hour))
	// The sandbox was touched lately, its shim's records long ago: ended then.
	touchAt(t, sb, "fw-live_touched", 1000, now)
	touchAt(t, ctl, "fw-live_touched", 10, now.Add(-3*time.Hour))
	touchAt(t, sb, "fw-live_future", 1000, now.Add(24*365*time.Hour))
	touchAt(t, sb, "fw-gone_running", 1000, now.Add(-3*time.Hour))
	touchAt(t, sb, "odd", 1000, now.Add(-3*time.Hour))
	touchAt(t, sb, ".fw-gone_hidden", 1000, now.Add(-3*time.Hour))
	mkfile(t, filepath.Join(sb, "README"), 10)

	after := newSandboxGC(cfg, testlog.New(t))
	after.load()
	tasks := map[string]sandboxTask{"fw-gone_running": {fw: "fw-gone", task: "running", running: true}}
	after.pass(context.Background(), now, tasks, func(string) bool { return false })

	for name, want := range map[string]bool{
		"fw-gone_t1": false, "fw-back_t1": true, "fw-live_old": false, "fw-live_touched": false, "fw-live_future": true,
		"fw-gone_running": true, "odd": true, ".fw-gone_hidden": true, "README": true,
	} {
		if got := exists(filepath.Join(sb, name)); got != want {
			t.Errorf("%s there: %v, want %v", name, got, want)
		}
	}
	if exists(filepath.Join(ctl, "fw-gone_t1")) {
		t.Error("the shim's records of a removed sandbox are still there")
	}
	s := after.snapshot()
	if s.removed[gcReasonDelay] != 2 || s.removed[gcReasonPressure] != 1 || s.stuck != 1 || s.sandboxes != 3 {
		t.Fatalf("stats %+v: want 2 removed for their delay, 1 for the budget, stuck, 3 sandboxes left", s)
	}
	if s.disk.Total <= 0 || s.bytes <= 0 {
		t.Errorf("stats %+v: want the disk and the sandboxes' bytes", s)
	}
}

// TestSandboxGC_goneForgotten: the gone frameworks' file is bounded.
func TestSandboxGC_goneForgotten(t *testing.T) {
	t.Parallel()
	now := time.Now()
	gone := map[protocol.FrameworkID]time.Time{"fw-old": now.Add(-3 * time.Hour), "fw-new": now}
	for i := range maxGone {
		gone[protocol.FrameworkID("fw-"+strconv.Itoa(i))] = now.Add(-time.Minute)
	}
	pruneGone(gone, now, time.Hour)
	if _, ok := gone["fw-old"]; ok {
		t.Error("a framework gone longer than kept is remembered")
	}
	if _, ok := gone["fw-new"]; !ok || len(gone) != maxGone {
		t.Errorf("%d remembered, fw-new among them: %v; want at most %d with the newest", len(gone), ok, maxGone)
	}
}
