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
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Hosts that still mount cgroup v1 for memory and cpu (older
// distributions, some container and microVM hosts) get the same limits
// through the v1 files: memory.limit_in_bytes (and memsw where swap is
// accounted) and cpu.cfs_quota_us. A v1 task cgroup sits at the same path
// under the memory and the cpu hierarchies.

// cgroupV1Controllers are the v1 hierarchies a task's cgroup is made in,
// memory first.
var cgroupV1Controllers = []string{"memory", "cpu"}

// setupCgroupV1Parent finds the v1 hierarchies of the memory and cpu
// controllers and creates parent in each. It returns their mount points
// in the order of cgroupV1Controllers.
func setupCgroupV1Parent(parent string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	found := cgroupV1Mounts(data, cgroupV1Controllers)
	var mounts, missing []string
	for _, c := range cgroupV1Controllers {
		if m, ok := found[c]; ok {
			mounts = append(mounts, m)
		} else {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no cgroup v1 hierarchy for the %s controller(s)", strings.Join(missing, ", "))
	}
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Join(m, parent), 0o755); err != nil {
			return nil, fmt.Errorf("create %s in %s: %w", parent, m, err)
		}
	}
	return mounts, nil
}

// cgroupV1Mounts maps each of controllers that a mounted cgroup v1
// hierarchy holds to its mount point, read from /proc/self/mountinfo.
func cgroupV1Mounts(mountinfo []byte, controllers []string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(tail[2], ",") {
			if _, seen := out[opt]; !seen && slices.Contains(controllers, opt) {
				out[opt] = fields[4]
			}
		}
	}
	return out
}

// cgroupV1Iso puts the task into a cgroup of its own in each v1 hierarchy.
// Version 1 cannot start a process in a cgroup (no CLONE_INTO_CGROUP), so
// the shim, which runs one task, joins the task's cgroups, starts the task
// there and goes back to its own: the task is in them from its first
// instruction, and the shim is charged only for what it allocates between.
type cgroupV1Iso struct {
	log    hclog.Logger
	mounts []string // memory, cpu
	group  string
	limits Limits
	shim   int
	pgid   int
	// home is the shim's own cgroup in each hierarchy, to go back to.
	home []string
	// claimed counts the hierarchies, in order, where the task's cgroup
	// was made (or found empty) for it: only those are drained.
	claimed  int
	leftOnce sync.Once
	leftErr  error
	watch    *memWatch // for the peak; the kernel enforces the limit
}

func newCgroupV1Iso(log hclog.Logger, sp shimSpec) *cgroupV1Iso {
	return &cgroupV1Iso{log: log, mounts: sp.CgroupV1, group: sp.CgroupGroup, limits: sp.Limits, shim: os.Getpid()}
}

func (c *cgroupV1Iso) dir(i int) string { return filepath.Join(c.mounts[i], c.group) }

func (c *cgroupV1Iso) prepare(*exec.Cmd) error {
	home, err := ownCgroupsV1(cgroupV1Controllers)
	if err != nil {
		return err
	}
	c.home = home
	for i := range c.mounts {
		err := os.Mkdir(c.dir(i), 0o755)
		if errors.Is(err, os.ErrExist) {
			// Left by a task of the same name whose supervisor died: reused
			// only when empty, never shared with processes of another task
			// (another agent on this host may use the same parent).
			if pids, perr := cgroupV1Procs(c.dir(i)); perr != nil || len(pids) > 0 {
				return fmt.Errorf("cgroup %s exists and holds %d processes", c.dir(i), len(pids))
			}
			err = nil
		}
		if err != nil {
			return fmt.Errorf("create cgroup %s: %w", c.dir(i), err)
		}
		c.claimed = i + 1
	}
	if c.limits.MemMiB > 0 {
		limit := strconv.FormatInt(c.limits.MemMiB<<20, 10)
		if err := writeCgroupFile(c.dir(0), "memory.limit_in_bytes", limit); err != nil {
			return err
		}
		// Where swap is accounted, the task may not swap past its limit
		// either (memsw is memory and swap together, at least the limit).
		if _, err := os.Stat(filepath.Join(c.dir(0), "memory.memsw.limit_in_bytes")); err == nil {
			if err := writeCgroupFile(c.dir(0), "memory.memsw.limit_in_bytes", limit); err != nil {
				return err
			}
		}
	}
	if c.limits.CPUMilli > 0 {
		quota := max(c.limits.CPUMilli*cpuPeriod/1000, 1000)
		if err := writeCgroupFile(c.dir(1), "cpu.cfs_period_us", strconv.Itoa(cpuPeriod)); err != nil {
			return err
		}
		if err := writeCgroupFile(c.dir(1), "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)); err != nil {
			return err
		}
	}
	for i := range c.mounts {
		if err := writeCgroupFile(c.dir(i), "cgroup.procs", strconv.Itoa(c.shim)); err != nil {
			c.leave()
			return fmt.Errorf("join the task's cgroup: %w", err)
		}
	}
	return nil
}

// leave takes the shim back to its own cgroups, once.
func (c *cgroupV1Iso) leave() error {
	c.leftOnce.Do(func() {
		for i, home := range c.home {
			if err := writeCgroupFile(filepath.Join(c.mounts[i], home), "cgroup.procs", strconv.Itoa(c.shim)); err != nil {
				c.leftErr = errors.Join(c.leftErr, err)
			}
		}
	})
	return c.leftErr
}

func (c *cgroupV1Iso) started(pid int) {
	c.pgid = pid
	c.watch = startMemWatch(c.log, c.shim, pid, 0)
	if err := c.leave(); err != nil {
		c.log.Warn("cannot leave the task's cgroup", "error", err)
	}
}

func (c *cgroupV1Iso) overLimit() <-chan string { return nil }

func (c *cgroupV1Iso) oomKilled() string {
	data, err := os.ReadFile(filepath.Join(c.dir(0), "memory.oom_control"))
	if err != nil {
		return ""
	}
	kills := cgroupValue(data, "oom_kill")
	if kills == 0 {
		return ""
	}
	if n := readCgroupBytes(filepath.Join(c.dir(0), "memory.max_usage_in_bytes")); n > 0 {
		return fmt.Sprintf("memory %d MiB over limit %d MiB: killed by the kernel (oom_kill %d)", mibCeil(n), c.limits.MemMiB, kills)
	}
	return fmt.Sprintf("memory over limit %d MiB: killed by the kernel (oom_kill %d)", c.limits.MemMiB, kills)
}

func (c *cgroupV1Iso) memPeak() int64 { return c.watch.memPeak() }

func (c *cgroupV1Iso) signal(sig syscall.Signal) { signalGroup(c.pgid, sig) }

func (c *cgroupV1Iso) killAll() {
	_ = c.leave()
	for i := range c.claimed {
		killCgroupV1(c.dir(i), c.shim)
	}
	killTask(c.shim, c.pgid)
}

func (c *cgroupV1Iso) cleanup() {
	c.watch.halt()
	if len(c.home) == 0 {
		return // never prepared
	}
	if err := c.leave(); err != nil {
		c.log.Warn("cannot leave the task's cgroup", "error", err)
		return // removing it would kill the shim
	}
	for i := range c.claimed {
		if err := drainCgroupV1(c.dir(i), c.shim); err != nil {
			c.log.Warn("cannot remove the task's cgroup", "cgroup", c.dir(i), "error", err)
		}
	}
}

// ownCgroupsV1 returns the calling process's cgroup in the hierarchy of
// each controller, from /proc/self/cgroup.
func ownCgroupsV1(controllers []string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	byController := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-id:controller[,controller...]:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			byController[ctl] = parts[2]
		}
	}
	out := make([]string, len(controllers))
	for i, ctl := range controllers {
		p, ok := byController[ctl]
		if !ok {
			return nil, fmt.Errorf("not in a cgroup v1 hierarchy of %s", ctl)
		}
		out[i] = p
	}
	return out, nil
}

func writeCgroupFile(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("cgroup %s: %w", file, err)
	}
	return nil
}

// cgroupV1Procs lists the processes in a v1 cgroup.
func cgroupV1Procs(dir string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// killCgroupV1 sends SIGKILL to every process in a v1 cgroup but the
// shim (version 1 has no cgroup.kill).
func killCgroupV1(dir string, shim int) {
	pids, _ := cgroupV1Procs(dir)
	for _, pid := range pids {
		if pid != shim {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// drainCgroupV1 kills what is left in a v1 cgroup, waits for it to empty
// and removes it. A process forked between a read and the kills is found
// by the next read.
func drainCgroupV1(dir string, shim int) error {
	deadline := time.Now().Add(cgroupDrainTimeout)
	for {
		pids, err := cgroupV1Procs(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return os.Remove(dir)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes remain", len(pids))
		}
		killCgroupV1(dir, shim)
		time.Sleep(10 * time.Millisecond)
	}
}
