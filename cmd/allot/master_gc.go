package main

import (
	"fmt"
	"runtime/debug"
)

// masterGCPercent is the garbage collector's target (GOGC) a master runs
// with unless told otherwise. A Go process holds up to about twice its
// live heap at GOGC=100, and a leader's live heap at 10,000 agents and
// 100,000 tasks is about 400 MiB, so with the NATS server's goroutine
// stacks its resident size passed 1 GiB; at 50 the heap may grow by half
// its live size between collections, for a little more of the leader's
// CPU spent collecting (docs/benchmarks.md, "Master memory and
// snapshots"). Prometheus lowers its default the same way.
const masterGCPercent = 50

// gcPercent is the GOGC to set for a master: the --gc-percent given, else
// none when the GOGC environment variable is set (the runtime has read
// it), else masterGCPercent. set is false when nothing is to be set.
func gcPercent(flag int, env string) (percent int, set bool, err error) {
	switch {
	case flag < 0:
		return 0, false, fmt.Errorf("--gc-percent %d: want a positive percentage (0: %d, or GOGC when set)", flag, masterGCPercent)
	case flag > 0:
		return flag, true, nil
	case env != "":
		return 0, false, nil
	}
	return masterGCPercent, true, nil
}

// applyGCPercent sets the master's GOGC as gcPercent decides; a flag it
// refuses sets nothing (masterFlags.config refuses it first).
func applyGCPercent(flag int, env string) {
	if p, set, err := gcPercent(flag, env); err == nil && set {
		debug.SetGCPercent(p)
	}
}
