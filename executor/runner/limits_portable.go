//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

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
	// signal sends sig to the task's process group.
	signal(sig syscall.Signal)
	// killAll kills every process of the task.
	killAll()
	// cleanup releases what the isolator holds, once the task is gone.
	cleanup()
}

// memWatchInterval is how often the portable mode sums the task's memory.
const memWatchInterval = 100 * time.Millisecond

// portable isolates with a process group and a memory watch.
type portable struct {
	log   hclog.Logger
	shim  int
	limit int64 // bytes, 0 for none
	pgid  int
	over  chan string
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newPortable(log hclog.Logger, l Limits) *portable {
	if l.CPUMilli > 0 {
		log.Info("cpu limit not enforced in portable isolation", "cpu_milli", l.CPUMilli)
	}
	return &portable{
		log: log, shim: os.Getpid(), limit: l.MemMiB << 20,
		over: make(chan string, 1), stop: make(chan struct{}),
	}
}

func (p *portable) prepare(*exec.Cmd) error { return nil }

func (p *portable) started(pid int) {
	p.pgid = pid
	if p.limit > 0 {
		p.wg.Add(1)
		go p.watch()
	}
}

func (p *portable) overLimit() <-chan string { return p.over }

func (p *portable) oomKilled() string { return "" }

func (p *portable) signal(sig syscall.Signal) { signalGroup(p.pgid, sig) }

func (p *portable) killAll() { killTask(p.shim, p.pgid) }

func (p *portable) cleanup() {
	close(p.stop)
	p.wg.Wait()
}

// watch sums the resident memory of the task's processes every
// memWatchInterval and reports the first time it exceeds the limit.
func (p *portable) watch() {
	defer p.wg.Done()
	tick := time.NewTicker(memWatchInterval)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		procs, err := findTaskProcs(p.shim, p.pgid)
		if err != nil {
			p.log.Warn("cannot list processes", "error", err)
			continue
		}
		var sum int64
		for _, q := range procs {
			sum += q.rss
		}
		if sum > p.limit {
			p.over <- fmt.Sprintf("memory %d MiB over limit %d MiB", mibCeil(sum), p.limit>>20)
			return
		}
	}
}

// mibCeil converts bytes to MiB rounding up, so that a usage just over a
// limit does not read as equal to it.
func mibCeil(bytes int64) int64 { return (bytes + 1<<20 - 1) >> 20 }

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
