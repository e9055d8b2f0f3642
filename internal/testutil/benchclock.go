package testutil

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchClock measures what the timed parts of a benchmark cost besides
// their wall time: the process's CPU time (every thread, the garbage
// collector's too), and the share of the machine's time a hypervisor took
// from it (steal), which on a shared virtual machine inflates wall times
// without the code doing more.
type BenchClock struct {
	cpu          time.Duration
	stealAt      [2]uint64 // steal and total ticks at start
	running      bool
	runningSince time.Duration
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineTicks is the steal and total ticks of /proc/stat (zeros where
// there is none).
func machineTicks() [2]uint64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [2]uint64{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	var out [2]uint64
	for i, f := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseUint(f, 10, 64)
		if i == 7 {
			out[0] = n
		}
		out[1] += n
	}
	return out
}

// StartBenchClock starts measuring; call Start and Stop around the timed
// parts, and Report at the end.
func StartBenchClock() *BenchClock { return &BenchClock{stealAt: machineTicks()} }

// Start marks the start of a timed part.
func (c *BenchClock) Start() { c.running, c.runningSince = true, processCPU() }

// Stop marks its end.
func (c *BenchClock) Stop() {
	if c.running {
		c.cpu += processCPU() - c.runningSince
		c.running = false
	}
}

// Report adds cpu-ms/op and steal-% to b's results, per op (b.N), or per
// unit when units is not 0 (cpu-µs/unit then).
func (c *BenchClock) Report(b *testing.B, units int, unit string) {
	c.Stop()
	if units > 0 {
		b.ReportMetric(float64(c.cpu.Microseconds())/float64(units), "cpu-µs/"+unit)
	} else {
		b.ReportMetric(float64(c.cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	end := machineTicks()
	if total := end[1] - c.stealAt[1]; total > 0 {
		b.ReportMetric(100*float64(end[0]-c.stealAt[0])/float64(total), "steal-%")
	}
}
