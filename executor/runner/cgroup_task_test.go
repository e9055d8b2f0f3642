//go:build linux

package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// cgroupRunner is a runner that requires cgroup v2 isolation, or a skip
// that says why the host cannot give it (cgroup v1 holding the memory and
// cpu controllers, no cgroup v2 mount, no permission to create a cgroup).
func cgroupRunner(t *testing.T) *Runner {
	t.Helper()
	cfg := testConfig(t, t.TempDir())
	cfg.Isolation, cfg.CgroupParent = IsolationCgroups, "/allot-runner-test-"+strings.ReplaceAll(t.Name(), "/", "-")
	r, err := New(cfg)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("cgroup v2 isolation is not available on this host: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(filepath.Join(r.cgroupMount, cfg.CgroupParent)) })
	return r
}

// TestTask_Limits_Cgroups runs real tasks under cgroup v2 limits where the
// host allows it: a task's cgroup has the memory.max and cpu.max its
// limits give, and a task that allocates past its memory is killed by the
// kernel and reported memory_limit.
func TestTask_Limits_Cgroups(t *testing.T) {
	t.Parallel()
	r := cgroupRunner(t)
	s := shellSpec("limited", `cat /proc/self/cgroup > cgroup; sleep 60`)
	s.Limits = Limits{MemMiB: 96, CPUMilli: 500}
	task := start(t, r, s)
	dir := filepath.Join(r.cgroupMount, r.cfg.CgroupParent, s.Name)
	for file, want := range map[string]string{"memory.max": "100663296", "cpu.max": "50000 100000"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || strings.TrimSpace(string(data)) != want {
			t.Errorf("%s: %q (%v), want %q", file, data, err, want)
		}
	}
	stop(t, task)

	hog := Spec{TaskID: "hog", Name: "hog", Command: protocol.CommandInfo{Value: os.Args[0]},
		Env: map[string]string{envHelper: "alloc"}, Limits: Limits{MemMiB: 64}}
	if e := wait(t, start(t, r, hog)); e.Reason != protocol.ReasonMemoryLimit {
		t.Fatalf("allocating past 64 MiB: got %+v, want memory_limit", e)
	}
}
