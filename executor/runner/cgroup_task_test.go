//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// cgroupRunner is a runner that requires cgroup isolation (v2, or v1
// where the host mounts the memory and cpu controllers there), or a skip
// that says why the host cannot give it (no cgroup hierarchy with both
// controllers, no permission to create a cgroup).
func cgroupRunner(t *testing.T) *Runner { return cgroupRunnerAt(t, t.TempDir()) }

// cgroupRunnerAt is cgroupRunner on the work directory dir.
func cgroupRunnerAt(t *testing.T, dir string) *Runner {
	t.Helper()
	cfg := testConfig(t, dir)
	cfg.Isolation, cfg.CgroupParent = IsolationCgroups, "/allot-runner-test-"+strings.ReplaceAll(t.Name(), "/", "-")
	r, err := New(cfg)
	if errors.Is(err, ErrUnsupported) {
		if os.Getenv("ALLOT_REQUIRE_CGROUPS") != "" {
			t.Fatalf("ALLOT_REQUIRE_CGROUPS is set and cgroups are not usable: %v", err)
		}
		t.Skipf("cgroup isolation is not available on this host: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, m := range append([]string{r.cgroupMount}, r.cgroupV1...) {
			if m != "" {
				_ = os.Remove(filepath.Join(m, cfg.CgroupParent))
			}
		}
	})
	return r
}

// limitFiles is what a task's cgroup holds for 96 MiB and half a CPU, by
// the path of each file.
func limitFiles(r *Runner, group string) map[string]string {
	if len(r.cgroupV1) > 0 {
		return map[string]string{
			filepath.Join(r.cgroupV1[0], group, "memory.limit_in_bytes"): "100663296",
			filepath.Join(r.cgroupV1[1], group, "cpu.cfs_quota_us"):      "50000",
			filepath.Join(r.cgroupV1[1], group, "cpu.cfs_period_us"):     "100000",
		}
	}
	return map[string]string{
		filepath.Join(r.cgroupMount, group, "memory.max"): "100663296",
		filepath.Join(r.cgroupMount, group, "cpu.max"):    "50000 100000",
	}
}

// TestTask_Limits_Cgroups runs real tasks under cgroup limits where the
// host allows it: a task's cgroup has the memory and cpu limits its
// limits give, the task is in it and the shim is not, a task that
// allocates past its memory is killed by the kernel and reported
// memory_limit, and the cgroups are gone once the tasks end. It fails
// with the task left in the shim's cgroup (the v1 join skipped), or with
// the shim left in the task's (the v1 leave skipped).
func TestTask_Limits_Cgroups(t *testing.T) {
	t.Parallel()
	r := cgroupRunner(t)
	s := shellSpec("limited", `cat /proc/self/cgroup > cgroup.tmp && mv cgroup.tmp cgroup; sleep 60`)
	s.Limits = Limits{MemMiB: 96, CPUMilli: 500}
	task := start(t, r, s)
	group := path.Join(r.cfg.CgroupParent, s.Name)
	for file, want := range limitFiles(r, group) {
		data, err := os.ReadFile(file)
		if err != nil || strings.TrimSpace(string(data)) != want {
			t.Errorf("%s: %q (%v), want %q", file, data, err, want)
		}
	}
	waitFile(t, task, "cgroup")
	inside, err := os.ReadFile(filepath.Join(task.Sandbox(), "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(inside), ":"+group+"\n"); n == 0 || (len(r.cgroupV1) > 0 && n < len(r.cgroupV1)) {
		t.Errorf("the task's /proc/self/cgroup names %s %d times:\n%s", group, n, inside)
	}
	var rec shimRecord
	if err := readJSON(control(task.ctl, shimFile), &rec); err != nil {
		t.Fatal(err)
	}
	shimCgroups, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", rec.ShimPid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(shimCgroups), group) {
		t.Errorf("the shim stayed in the task's cgroup:\n%s", shimCgroups)
	}
	stop(t, task)

	hog := Spec{TaskID: "hog", Name: "hog", Command: protocol.CommandInfo{Value: os.Args[0]},
		Env: map[string]string{envHelper: "alloc"}, Limits: Limits{MemMiB: 64}}
	if e := wait(t, start(t, r, hog)); e.Reason != protocol.ReasonMemoryLimit {
		t.Fatalf("allocating past 64 MiB: got %+v, want memory_limit", e)
	}
	for _, m := range append([]string{r.cgroupMount}, r.cgroupV1...) {
		for _, name := range []string{s.Name, hog.Name} {
			if _, err := os.Stat(filepath.Join(m, r.cfg.CgroupParent, name)); m != "" && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("cgroup %s of an ended task: %v, want it removed", name, err)
			}
		}
	}
}

// TestTask_MemPeak_Cgroups: under cgroups too, a task's exit carries
// the most resident memory it held (not the cgroup's charge, which counts
// the page cache).
func TestTask_MemPeak_Cgroups(t *testing.T) {
	t.Parallel()
	checkMemPeak(t, cgroupRunner(t))
}

// TestTask_Cgroups_ShimKilled: when a task's supervisor dies, the runner
// that finds the task again kills what its cgroup holds, a process that
// left the task's process group included, and removes the cgroup. It
// fails with the orphan kill reading only the process group.
func TestTask_Cgroups_ShimKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := cgroupRunnerAt(t, dir)
	old := start(t, r, shellSpec("orphan", `setsid sleep 60 & echo $! > escaped.tmp && mv escaped.tmp escaped; exec sleep 60`))
	waitFile(t, old, "escaped")
	data, err := os.ReadFile(filepath.Join(old.Sandbox(), "escaped"))
	if err != nil {
		t.Fatal(err)
	}
	escaped, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	var rec shimRecord
	if err := readJSON(control(old.ctl, shimFile), &rec); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(rec.ShimPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, rec.ShimPid)

	task, err := cgroupRunnerAt(t, dir).Reattach(context.Background(), "orphan")
	if err != nil {
		t.Fatal(err)
	}
	if e := wait(t, task); e.Reason != protocol.ReasonExecutorTerminated {
		t.Fatalf("got %+v, want executor_terminated", e)
	}
	waitGone(t, rec.TaskPid)
	waitGone(t, escaped)
	for _, m := range append([]string{r.cgroupMount}, r.cgroupV1...) {
		if _, err := os.Stat(filepath.Join(m, r.cfg.CgroupParent, "orphan")); m != "" && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the orphan's cgroup in %s: %v, want it removed", m, err)
		}
	}
}

// TestTask_Cgroups_V1NotShared: in cgroup v1, a task whose cgroup already
// exists and holds another process (a task of the same name under another
// agent on this host) fails to start and leaves that process alone; an
// empty leftover cgroup is reused. It fails with an existing cgroup joined
// whatever it holds, or with the failed start's cleanup draining a cgroup
// it did not make.
func TestTask_Cgroups_V1NotShared(t *testing.T) {
	t.Parallel()
	r := cgroupRunner(t)
	if len(r.cgroupV1) == 0 {
		t.Skip("cgroup v2 here: tasks are born in a cgroup they create")
	}
	held := filepath.Join(r.cgroupV1[0], r.cfg.CgroupParent, "held")
	if err := os.Mkdir(held, 0o755); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait(); _ = os.Remove(held) })
	if err := os.WriteFile(filepath.Join(held, "cgroup.procs"), []byte(strconv.Itoa(other.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	task, err := r.Start(context.Background(), shellSpec("held", "sleep 60"))
	if err == nil {
		if e := wait(t, task); e.Reason != protocol.ReasonCommandFailed || !strings.Contains(e.Message, "holds 1 processes") {
			t.Fatalf("a task in an occupied cgroup: %+v, want it not started", e)
		}
	} else if !strings.Contains(err.Error(), "holds 1 processes") {
		t.Fatalf("a task in an occupied cgroup: %v", err)
	}
	if st, err := readProcStat(other.Process.Pid); err != nil || st.state == 'Z' {
		t.Fatalf("the other process: %v, state %c; want it running", err, st.state)
	}

	empty := filepath.Join(r.cgroupV1[0], r.cfg.CgroupParent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	s := shellSpec("empty", "exit 0")
	if e := wait(t, start(t, r, s)); code(e) != 0 {
		t.Fatalf("a task in an empty leftover cgroup: %+v", e)
	}
}

// TestCgroupV1Mounts finds the hierarchies of the controllers asked for in
// mountinfo: cpu apart from cpuacct and cpuset, nothing from cgroup2, and
// nothing for a controller no hierarchy holds.
func TestCgroupV1Mounts(t *testing.T) {
	t.Parallel()
	info := `25 24 0:22 / /sys/fs/cgroup type tmpfs rw - tmpfs tmpfs rw
26 25 0:23 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
27 25 0:24 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
28 25 0:25 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
29 25 0:26 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
30 25 0:27 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
`
	got := cgroupV1Mounts([]byte(info), []string{"memory", "cpu", "hugetlb"})
	want := map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
