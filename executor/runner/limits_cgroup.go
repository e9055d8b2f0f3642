//go:build linux

package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup2"
	"github.com/hashicorp/go-hclog"
)

// cpuPeriod is the cpu.max period in microseconds.
const cpuPeriod = 100_000

// cgroupDrainTimeout bounds the wait for a killed cgroup to empty before
// it is removed.
const cgroupDrainTimeout = 2 * time.Second

// setupCgroupParent checks that cgroup v2 is usable for tasks: mounted,
// with the memory and cpu controllers, and parent creatable with both
// enabled for its children. It returns the cgroup v2 mount point.
func setupCgroupParent(parent string) (string, error) {
	var mount string
	switch cgroups.Mode() {
	case cgroups.Unified:
		mount = "/sys/fs/cgroup"
	case cgroups.Hybrid:
		mount = "/sys/fs/cgroup/unified"
	default:
		return "", errors.New("cgroup v2 is not mounted")
	}
	if err := hasControllers(mount); err != nil {
		return "", err
	}
	if _, err := cgroup2.NewManager(mount, parent, &cgroup2.Resources{Memory: &cgroup2.Memory{}, CPU: &cgroup2.CPU{}}); err != nil {
		return "", fmt.Errorf("create %s: %w", parent, err)
	}
	if err := os.WriteFile(filepath.Join(mount, parent, "cgroup.subtree_control"), []byte("+memory +cpu"), 0); err != nil {
		return "", fmt.Errorf("enable memory and cpu below %s (it must hold no processes): %w", parent, err)
	}
	return mount, nil
}

// hasControllers checks that the cgroup v2 root offers memory and cpu.
func hasControllers(mount string) error {
	data, err := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if err != nil {
		return err
	}
	have := strings.Fields(string(data))
	var missing []string
	for _, c := range []string{"memory", "cpu"} {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("cgroup v2 at %s lacks the %s controller(s); cgroup v1 may hold them",
			mount, strings.Join(missing, ", "))
	}
	return nil
}

// cgroupIso puts the task into its own cgroup with memory.max and cpu.max.
type cgroupIso struct {
	log          hclog.Logger
	mount, group string
	limits       Limits
	shim, pgid   int
	mgr          *cgroup2.Manager
	dir          *os.File
	watch        *memWatch // for the peak; the kernel enforces the limit
}

func newCgroupIso(log hclog.Logger, sp shimSpec) *cgroupIso {
	return &cgroupIso{log: log, mount: sp.CgroupMount, group: sp.CgroupGroup, limits: sp.Limits, shim: os.Getpid()}
}

func (c *cgroupIso) prepare(cmd *exec.Cmd) error {
	res := &cgroup2.Resources{Memory: &cgroup2.Memory{}, CPU: &cgroup2.CPU{}}
	if c.limits.MemMiB > 0 {
		limit, group := c.limits.MemMiB<<20, true
		res.Memory.Max, res.Memory.OOMGroup = &limit, &group
	}
	if c.limits.CPUMilli > 0 {
		quota, period := max(c.limits.CPUMilli*cpuPeriod/1000, 1000), uint64(cpuPeriod)
		res.CPU.Max = cgroup2.NewCPUMax(&quota, &period)
	}
	mgr, err := cgroup2.NewManager(c.mount, c.group, res)
	if err != nil {
		return fmt.Errorf("create cgroup %s: %w", c.group, err)
	}
	c.mgr = mgr
	if c.dir, err = os.Open(filepath.Join(c.mount, c.group)); err != nil {
		return err
	}
	// The task is born in its cgroup (clone3 CLONE_INTO_CGROUP).
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(c.dir.Fd())
	return nil
}

func (c *cgroupIso) started(pid int) {
	c.pgid = pid
	c.dir.Close()
	c.watch = startMemWatch(c.log, c.shim, pid, 0)
}

func (c *cgroupIso) overLimit() <-chan string { return nil }

func (c *cgroupIso) oomKilled() string {
	data, err := os.ReadFile(filepath.Join(c.mount, c.group, "memory.events"))
	if err != nil {
		return ""
	}
	kills := cgroupValue(data, "oom_kill")
	if kills == 0 {
		return ""
	}
	if n := readCgroupBytes(filepath.Join(c.mount, c.group, "memory.peak")); n > 0 {
		return fmt.Sprintf("memory %d MiB over limit %d MiB: killed by the kernel (oom_kill %d)", mibCeil(n), c.limits.MemMiB, kills)
	}
	return fmt.Sprintf("memory over limit %d MiB: killed by the kernel (oom_kill %d)", c.limits.MemMiB, kills)
}

func (c *cgroupIso) memPeak() int64 { return c.watch.memPeak() }

// readCgroupBytes reads a cgroup file holding one count of bytes; 0 when
// it cannot.
func readCgroupBytes(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func (c *cgroupIso) signal(sig syscall.Signal) { signalGroup(c.pgid, sig) }

func (c *cgroupIso) killAll() {
	if err := c.mgr.Kill(); err != nil {
		c.log.Warn("cgroup kill failed", "error", err)
	}
	killTask(c.shim, c.pgid)
}

func (c *cgroupIso) cleanup() {
	c.watch.halt()
	if c.mgr == nil {
		return
	}
	if err := drainCgroup(c.mgr); err != nil {
		c.log.Warn("cannot remove the task's cgroup", "cgroup", c.group, "error", err)
	}
}

// drainCgroup kills what is left in a cgroup, waits for it to empty and
// removes it.
func drainCgroup(m *cgroup2.Manager) error {
	deadline := time.Now().Add(cgroupDrainTimeout)
	for {
		procs, err := m.Procs(true)
		if err != nil {
			return err
		}
		if len(procs) == 0 {
			return m.Delete()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes remain", len(procs))
		}
		_ = m.Kill()
		time.Sleep(10 * time.Millisecond)
	}
}

// cgroupValue returns the value of key in a flat-keyed cgroup file.
func cgroupValue(data []byte, key string) uint64 {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// killOrphan kills what is left of a task whose shim died: the task's
// process group if its leader is still the recorded process, and its
// cgroup. It reports whether it found anything to kill.
func killOrphan(rec shimRecord) bool {
	killed := false
	if alive(rec.TaskPid, rec.TaskStart) {
		_ = syscall.Kill(-rec.TaskPid, syscall.SIGKILL)
		_ = syscall.Kill(rec.TaskPid, syscall.SIGKILL)
		killed = true
	}
	for _, mount := range rec.CgroupV1 {
		if rec.CgroupGroup == "" || rec.CgroupGroup == "/" {
			break // never the hierarchy's root
		}
		dir := filepath.Join(mount, rec.CgroupGroup)
		if pids, err := cgroupV1Procs(dir); err == nil && len(pids) > 0 {
			killed = true
		}
		_ = drainCgroupV1(dir, 0)
	}
	if rec.CgroupGroup != "" && len(rec.CgroupV1) == 0 {
		m, err := cgroup2.Load(rec.CgroupGroup, cgroup2.WithMountpoint(rec.CgroupMount))
		if err == nil {
			if procs, err := m.Procs(true); err == nil && len(procs) > 0 {
				killed = true
			}
			_ = drainCgroup(m)
		}
	}
	return killed
}
