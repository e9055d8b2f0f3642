//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHasControllers(t *testing.T) {
	t.Parallel()
	for content, missing := range map[string]string{
		"cpuset cpu io memory hugetlb pids\n": "",
		"hugetlb\n":                           "memory, cpu",
		"memory pids":                         "cpu",
	} {
		mount := t.TempDir()
		if err := os.WriteFile(filepath.Join(mount, "cgroup.controllers"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		err := hasControllers(mount)
		if missing == "" && err != nil || missing != "" && (err == nil || !strings.Contains(err.Error(), "lacks the "+missing)) {
			t.Errorf("%q: got %v, want missing %q", content, err, missing)
		}
	}
}

func TestCgroupIso_OOMKilled(t *testing.T) {
	t.Parallel()
	mount := t.TempDir()
	dir := filepath.Join(mount, "allot", "task")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &cgroupIso{mount: mount, group: "/allot/task", limits: Limits{MemMiB: 64}}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 0\n")
	if got := c.oomKilled(); got != "" {
		t.Fatalf("no oom kill: got %q", got)
	}
	write("memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 1\n")
	if got, want := c.oomKilled(), "memory over limit 64 MiB: killed by the kernel (oom_kill 1)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	write("memory.peak", "67112960\n")
	if got, want := c.oomKilled(), "memory 65 MiB over limit 64 MiB: killed by the kernel (oom_kill 1)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
