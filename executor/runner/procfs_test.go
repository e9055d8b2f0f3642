//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testutil"
)

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// The command name may hold spaces and parentheses.
	line := "4242 (a) (b c) S 1 4240 4240 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 12345678 300 " +
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 2 0 0 0 0 0\n"
	st, err := parseProcStat(4242, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{pid: 4242, ppid: 1, pgrp: 4240, state: 'S', start: 987654, rss: 300 * pageSize}
	if st != want {
		t.Fatalf("got %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 1 2", "1 (x) S a 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23"} {
		if _, err := parseProcStat(1, []byte(bad)); err == nil {
			t.Errorf("%q: parsed", bad)
		}
	}
}

func TestReadProcStat_Self(t *testing.T) {
	t.Parallel()
	st, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != os.Getppid() || st.start == 0 || st.rss <= 0 {
		t.Fatalf("got %+v", st)
	}
	if !alive(os.Getpid(), st.start) || alive(os.Getpid(), st.start+1) || alive(0, 0) {
		t.Fatal("alive disagrees with the start time")
	}
}

func TestTaskProcs(t *testing.T) {
	t.Parallel()
	procs := []procStat{
		{pid: 1, ppid: 0, pgrp: 1},
		{pid: 10, ppid: 1, pgrp: 10},  // the shim
		{pid: 11, ppid: 10, pgrp: 11}, // the task, leader of its group
		{pid: 12, ppid: 11, pgrp: 11}, // its child
		{pid: 13, ppid: 12, pgrp: 13}, // a grandchild in a group of its own
		{pid: 14, ppid: 10, pgrp: 14}, // an orphan reparented to the shim
		{pid: 15, ppid: 1, pgrp: 11},  // in the group, reparented to init
		{pid: 20, ppid: 1, pgrp: 20},  // unrelated
		{pid: 21, ppid: 20, pgrp: 20}, // unrelated
	}
	var got []int
	for _, p := range taskProcs(procs, 10, 11) {
		got = append(got, p.pid)
	}
	slices.Sort(got)
	if want := []int{11, 12, 13, 14, 15}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestDescendants finds a child and a grandchild through the kernel's
// child lists, and agrees with the full /proc scan.
func TestDescendants(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	var got []procStat
	testutil.WaitFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		procs, ok := descendants(cmd.Process.Pid)
		if !ok {
			return fmt.Errorf("no child lists")
		}
		if len(procs) != 1 {
			return fmt.Errorf("got %d descendants of sh, want its sleep", len(procs))
		}
		got = procs
		return nil
	})
	all, err := listProcs()
	if err != nil {
		t.Fatal(err)
	}
	scanned := taskProcs(all, cmd.Process.Pid, 0)
	if len(scanned) != 1 || scanned[0].pid != got[0].pid {
		t.Errorf("full scan found %v, child lists %v", scanned, got)
	}
	if _, ok := descendants(1 << 30); ok {
		t.Error("descendants of a pid that does not exist: got ok")
	}
}
