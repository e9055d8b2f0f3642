//go:build linux

package runner

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// isolator enforces a task's limits inside the shim.
type isolator interface {
	// prepare adjusts the command before it starts.
	prepare(cmd *exec.Cmd) error
	// started is told the task's pid (its process group) once it runs.
	started(pid int)
	// overLimit delivers a message when the task exceeds its memory and the
	// shim must kill it; nil when the kernel enforces the limit itself.
	overLimit() <-chan string
	// oomKilled returns a message if the kernel killed the task for
	// memory, after it exited.
	oomKilled() string
	// memPeak returns the most resident memory, in bytes, the task's
	// processes were seen to hold (memWatch.memPeak); 0 when not known.
	memPeak() int64
	// signal sends sig to the task's process group.
	signal(sig syscall.Signal)
	// killAll kills every process of the task.
	killAll()
	// cleanup releases what the isolator holds, once the task is gone.
	cleanup()
}

// portable isolates with a process group and a memory watch.
type portable struct {
	log   hclog.Logger
	shim  int
	limit int64 // bytes, 0 for none
	pgid  int
	watch *memWatch
}

func newPortable(log hclog.Logger, l Limits) *portable {
	if l.CPUMilli > 0 {
		log.Info("cpu limit not enforced in portable isolation", "cpu_milli", l.CPUMilli)
	}
	return &portable{log: log, shim: os.Getpid(), limit: l.MemMiB << 20}
}

func (p *portable) prepare(*exec.Cmd) error { return nil }

func (p *portable) started(pid int) {
	p.pgid = pid
	p.watch = startMemWatch(p.log, p.shim, pid, p.limit)
}

func (p *portable) overLimit() <-chan string { return p.watch.overLimit() }

func (p *portable) oomKilled() string { return "" }

func (p *portable) memPeak() int64 { return p.watch.memPeak() }

func (p *portable) signal(sig syscall.Signal) { signalGroup(p.pgid, sig) }

func (p *portable) killAll() { killTask(p.shim, p.pgid) }

func (p *portable) cleanup() { p.watch.halt() }

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}

// killTask SIGKILLs the process group pgid and every descendant of the
// shim, including those that left the group.
func killTask(shim, pgid int) {
	signalGroup(pgid, syscall.SIGKILL)
	procs, err := findTaskProcs(shim, pgid)
	if err != nil {
		return
	}
	for _, q := range procs {
		_ = syscall.Kill(q.pid, syscall.SIGKILL)
	}
}
