//go:build linux

package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// procStat is what the runner reads from /proc/<pid>/stat.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	// start is the start time in clock ticks since boot: with the pid it
	// identifies a process across pid reuse.
	start uint64
	// rss is the resident set size in bytes.
	rss int64
}

var pageSize = int64(os.Getpagesize())

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(pid, data)
}

// parseProcStat parses the content of /proc/<pid>/stat. The command name
// (field 2) is in parentheses and may itself hold spaces and parentheses,
// so the fields are counted from the last ')'.
func parseProcStat(pid int, data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return procStat{}, fmt.Errorf("proc %d: malformed stat", pid)
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("proc %d: malformed stat", pid)
	}
	st := procStat{pid: pid, state: f[0][0]}
	var errs [4]error
	st.ppid, errs[0] = strconv.Atoi(string(f[1]))
	st.pgrp, errs[1] = strconv.Atoi(string(f[2]))
	st.start, errs[2] = strconv.ParseUint(string(f[19]), 10, 64)
	var rss int64
	rss, errs[3] = strconv.ParseInt(string(f[21]), 10, 64)
	for _, err := range errs {
		if err != nil {
			return procStat{}, fmt.Errorf("proc %d: malformed stat: %w", pid, err)
		}
	}
	st.rss = rss * pageSize
	return st, nil
}

// readPeakRSS returns a live process's peak resident memory since it last
// executed a program (VmHWM in /proc/<pid>/status), in bytes.
func readPeakRSS(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kib, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("proc %d: malformed VmHWM: %w", pid, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("proc %d: no VmHWM", pid)
}

// procStart returns the start time of a live process.
func procStart(pid int) (uint64, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	return st.start, nil
}

// alive reports whether the process pid still runs (is not a zombie) and is
// the one that started at start.
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := readProcStat(pid)
	return err == nil && st.start == start && st.state != 'Z' && st.state != 'X'
}

// listProcs reads the stat of every process; processes that vanish while
// it reads are skipped.
func listProcs() ([]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out, nil
}

// taskProcs returns the processes of a task: those in the process group
// pgid, and every descendant of the shim (which is their subreaper, so
// processes that left the group stay below it). The shim is not included.
func taskProcs(procs []procStat, shim, pgid int) []procStat {
	children := make(map[int][]int, len(procs))
	in := make(map[int]bool)
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
		if pgid > 0 && p.pgrp == pgid {
			in[p.pid] = true
		}
	}
	visited := map[int]bool{shim: true}
	queue := []int{shim}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !visited[c] {
				visited[c] = true
				in[c] = true
				queue = append(queue, c)
			}
		}
	}
	delete(in, shim)
	var out []procStat
	for _, p := range procs {
		if in[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// findTaskProcs returns the processes of a task (see taskProcs). While the
// shim lives, its descendants are found by walking the kernel's child
// lists down from it, which costs the size of the task's process tree; a
// full scan of /proc costs the size of the machine's, and a thousand shims
// each scanning /proc ten times a second would use the machine up. Without
// child lists, or once the shim is gone, it falls back to the full scan.
func findTaskProcs(shim, pgid int) ([]procStat, error) {
	if procs, ok := descendants(shim); ok {
		return procs, nil
	}
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	return taskProcs(procs, shim, pgid), nil
}

// descendants walks /proc/<pid>/task/<tid>/children from root down and
// returns the stat of every descendant; ok is false when root's child
// lists cannot be read.
func descendants(root int) (out []procStat, ok bool) {
	if root <= 0 {
		return nil, false
	}
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		kids, err := childPIDs(pid)
		if err != nil {
			if pid == root {
				return nil, false
			}
			continue // it exited while we walked
		}
		for _, c := range kids {
			if seen[c] {
				continue
			}
			seen[c] = true
			if st, err := readProcStat(c); err == nil {
				out = append(out, st)
				queue = append(queue, c)
			}
		}
	}
	return out, true
}

// childPIDs lists the children of every thread of pid.
func childPIDs(pid int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, tid := range tids {
		data, err := os.ReadFile(dir + "/" + tid.Name() + "/children")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && len(out) == 0 && tid.Name() == strconv.Itoa(pid) {
				return nil, err // no child lists in this kernel
			}
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}
