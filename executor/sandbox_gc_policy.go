package executor

import (
	"cmp"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// The sandbox collector's policy, as Mesos's --gc_delay and disk watch:
// a pure function of the sandboxes, the time and the disk, so that every
// rule is a table test (sandbox_gc_policy_test.go). The agent's collector
// (sandbox_gc.go) gathers its inputs and carries out its decisions.

// gcSandbox is one sandbox as the policy sees it.
type gcSandbox struct {
	Name      string
	Framework protocol.FrameworkID // "" when not known
	Task      protocol.TaskID      // "" when not known
	// Ended is when the sandbox's task ended; zero while it runs, or may
	// still run: such a sandbox is never removed.
	Ended time.Time
	// Size is the bytes the sandbox takes on disk.
	Size int64
	// FrameworkGone is set when the task's framework is known to be gone
	// (the agent was told to shut it down): nobody will read the sandbox
	// any more, so it may go before its delay under disk pressure.
	FrameworkGone bool
}

// gcPolicy is the collector's configuration (Config.GCDelay,
// GCDiskThreshold, GCDiskBudget).
type gcPolicy struct {
	Delay     time.Duration
	Threshold float64 // fraction of the file system used; 1 never
	Budget    int64   // bytes all sandboxes together may take; 0 none
}

// diskUsage is the work directory's file system, in bytes, as df counts
// it: Used and Avail (to unprivileged users) make the fraction used, and
// Total includes the blocks reserved for root. Zero when not known.
type diskUsage struct {
	Total, Used, Avail int64
}

// fraction returns the share of the file system used, as df's Use%.
func (d diskUsage) fraction() float64 {
	if d.Used+d.Avail <= 0 {
		return 0
	}
	return float64(d.Used) / float64(d.Used+d.Avail)
}

// Why a sandbox is removed, the reason label of
// allot_agent_sandboxes_removed_total.
const (
	gcReasonDelay    = "delay"
	gcReasonPressure = "pressure"
)

// gcRemoval is one sandbox to remove.
type gcRemoval struct {
	Name   string
	Reason string
	Size   int64
}

// gcPlan is the policy's decision.
type gcPlan struct {
	// Remove are the sandboxes to remove, in this order: those past their
	// delay, oldest end first, then those removed early for the disk,
	// oldest end first.
	Remove []gcRemoval
	// Pressure is set when the disk was over its threshold or the
	// sandboxes over their budget once the delayed ones were removed.
	Pressure bool
	// Stuck is set when the pressure remains after every removal the
	// policy allows; Protected then counts the ended sandboxes of live
	// frameworks, within their delay, that it keeps.
	Stuck     bool
	Protected int
}

// planGC decides which sandboxes to remove at now:
//
//   - a sandbox whose task ended at least Delay ago goes (reason delay);
//   - then, while the file system is fuller than Threshold or the
//     sandboxes together take more than Budget, ended sandboxes of
//     frameworks known gone go too, oldest end first, until back under
//     (reason pressure), each assumed to free its size;
//   - the sandbox of a task that runs (or may run) is never removed, and
//     an ended one of a framework that may still read it never before its
//     delay, whatever the disk: if they keep the pressure, the plan says
//     it is stuck.
func planGC(sbs []gcSandbox, now time.Time, p gcPolicy, disk diskUsage) gcPlan {
	var total int64
	var ended []gcSandbox
	for _, s := range sbs {
		total += s.Size
		if !s.Ended.IsZero() {
			ended = append(ended, s)
		}
	}
	slices.SortFunc(ended, func(a, b gcSandbox) int {
		return cmp.Or(a.Ended.Compare(b.Ended), cmp.Compare(a.Name, b.Name))
	})
	var plan gcPlan
	remove := func(s gcSandbox, reason string) {
		plan.Remove = append(plan.Remove, gcRemoval{Name: s.Name, Reason: reason, Size: s.Size})
		total -= s.Size
		disk.Used = max(disk.Used-s.Size, 0)
		disk.Avail += s.Size
	}
	over := func() bool {
		return (p.Budget > 0 && total > p.Budget) || (p.Threshold > 0 && disk.fraction() > p.Threshold)
	}
	var early []gcSandbox
	for _, s := range ended {
		if now.Sub(s.Ended) >= p.Delay {
			remove(s, gcReasonDelay)
		} else {
			early = append(early, s)
		}
	}
	plan.Pressure = over()
	for _, s := range early {
		if !over() {
			break
		}
		if s.FrameworkGone {
			remove(s, gcReasonPressure)
		}
	}
	if plan.Pressure && over() {
		plan.Stuck = true
		for _, s := range early {
			if !s.FrameworkGone {
				plan.Protected++
			}
		}
	}
	return plan
}
