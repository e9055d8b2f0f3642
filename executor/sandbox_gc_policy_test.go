package executor

import (
	"slices"
	"testing"
	"time"
)

// planGCNow is the time of TestPlanGC's cases.
var planGCNow = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func runningSandbox(name string, size int64) gcSandbox { return gcSandbox{Name: name, Size: size} }

func endedSandbox(name string, ago time.Duration, size int64, gone bool) gcSandbox {
	return gcSandbox{Name: name, Ended: planGCNow.Add(-ago), Size: size, FrameworkGone: gone}
}

type planGCCase struct {
	name      string
	sbs       []gcSandbox
	policy    gcPolicy
	disk      diskUsage
	want      []gcRemoval
	pressure  bool
	stuck     bool
	protected int
}

// planGCCases are TestPlanGC's cases, with a delay of an hour.
func planGCCases() []planGCCase {
	const delay = time.Hour
	running, ended := runningSandbox, endedSandbox
	// A file system of 1,000 bytes, 500 used.
	half := diskUsage{Total: 1000, Used: 500, Avail: 500}
	return []planGCCase{{
		name:   "nothing past its delay, no pressure",
		sbs:    []gcSandbox{running("r", 100), ended("e", 59*time.Minute, 100, true)},
		policy: gcPolicy{Delay: delay, Threshold: 0.9},
		disk:   half,
	}, {
		name:   "past the delay, oldest end first, whatever its framework",
		sbs:    []gcSandbox{ended("b", 2*time.Hour, 10, false), ended("a", 3*time.Hour, 10, false), ended("c", time.Hour, 10, true)},
		policy: gcPolicy{Delay: delay, Threshold: 0.9},
		disk:   half,
		want:   []gcRemoval{{"a", gcReasonDelay, 10}, {"b", gcReasonDelay, 10}, {"c", gcReasonDelay, 10}},
	}, {
		name:   "a running task's sandbox stays, however old and full",
		sbs:    []gcSandbox{running("r", 900)},
		policy: gcPolicy{Delay: delay, Threshold: 0.5, Budget: 10},
		disk:   diskUsage{Total: 1000, Used: 950, Avail: 50},
		// Pressure that nothing removable can relieve, and no ended
		// sandbox of a live framework kept for it.
		pressure: true, stuck: true,
	}, {
		name: "threshold: gone frameworks' sandboxes go early, oldest first, until under",
		sbs: []gcSandbox{ended("new", time.Minute, 100, true), ended("old", 30*time.Minute, 100, true),
			ended("mid", 10*time.Minute, 100, true), running("r", 100)},
		policy:   gcPolicy{Delay: delay, Threshold: 0.8},
		disk:     diskUsage{Total: 1000, Used: 950, Avail: 50},
		want:     []gcRemoval{{"old", gcReasonPressure, 100}, {"mid", gcReasonPressure, 100}},
		pressure: true,
	}, {
		name: "budget: removal stops once the sandboxes fit",
		sbs: []gcSandbox{ended("a", 3*time.Minute, 300, true), ended("b", 2*time.Minute, 300, true),
			ended("c", time.Minute, 300, true)},
		policy:   gcPolicy{Delay: delay, Threshold: 1, Budget: 650},
		disk:     half,
		want:     []gcRemoval{{"a", gcReasonPressure, 300}},
		pressure: true,
	}, {
		name: "a live framework's ended sandbox is kept within its delay, even first in line",
		sbs: []gcSandbox{ended("live", 50*time.Minute, 300, false), ended("gone", 5*time.Minute, 300, true),
			ended("gone2", time.Minute, 300, true)},
		policy:   gcPolicy{Delay: delay, Threshold: 1, Budget: 200},
		disk:     half,
		want:     []gcRemoval{{"gone", gcReasonPressure, 300}, {"gone2", gcReasonPressure, 300}},
		pressure: true, stuck: true, protected: 1,
	}, {
		name:   "the delayed removals relieve the pressure: nothing goes early",
		sbs:    []gcSandbox{ended("old", 2*time.Hour, 400, false), ended("gone", time.Minute, 400, true)},
		policy: gcPolicy{Delay: delay, Threshold: 1, Budget: 500},
		disk:   half,
		want:   []gcRemoval{{"old", gcReasonDelay, 400}},
	}, {
		name:   "threshold 1 and no budget: never pressure",
		sbs:    []gcSandbox{ended("gone", time.Minute, 400, true)},
		policy: gcPolicy{Delay: delay, Threshold: 1},
		disk:   diskUsage{Total: 1000, Used: 1000},
	}, {
		name:   "an unknown disk is no pressure",
		sbs:    []gcSandbox{ended("gone", time.Minute, 400, true)},
		policy: gcPolicy{Delay: delay, Threshold: 0.1},
	}, {
		name:   "ties in end time go by name",
		sbs:    []gcSandbox{ended("b", 2*time.Hour, 1, false), ended("a", 2*time.Hour, 1, false)},
		policy: gcPolicy{Delay: delay, Threshold: 1},
		want:   []gcRemoval{{"a", gcReasonDelay, 1}, {"b", gcReasonDelay, 1}},
	}}
}

func TestPlanGC(t *testing.T) {
	t.Parallel()
	for _, tc := range planGCCases() {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.sbs)
			plan := planGC(in, planGCNow, tc.policy, tc.disk)
			if !slices.Equal(plan.Remove, tc.want) {
				t.Errorf("remove %+v, want %+v", plan.Remove, tc.want)
			}
			if plan.Pressure != tc.pressure || plan.Stuck != tc.stuck || plan.Protected != tc.protected {
				t.Errorf("pressure %v stuck %v protected %d, want %v %v %d", plan.Pressure, plan.Stuck, plan.Protected,
					tc.pressure, tc.stuck, tc.protected)
			}
			if !slices.Equal(in, tc.sbs) {
				t.Error("planGC changed its input")
			}
		})
	}
}
