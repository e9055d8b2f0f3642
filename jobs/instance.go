package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// InstanceState is where an instance of a group is in its life.
type InstanceState string

// Instance states.
const (
	// InstanceStarting: launched, not running yet.
	InstanceStarting InstanceState = "starting"
	// InstanceRunning: every task of it runs.
	InstanceRunning InstanceState = "running"
	// InstanceFinished: ended with every task exiting 0.
	InstanceFinished InstanceState = "finished"
	// InstanceFailed: ended any other way (failed, killed, lost).
	InstanceFailed InstanceState = "failed"
)

// Ended reports whether the instance has ended.
func (s InstanceState) Ended() bool { return s == InstanceFinished || s == InstanceFailed }

// Slot names an instance's place in its job: group and index.
type Slot struct {
	Group string
	Index int
}

func (s Slot) String() string { return s.Group + "/" + strconv.Itoa(s.Index) }

// Instance is one run of a group's tasks in a slot, as the runner sees it.
type Instance struct {
	Slot
	// Version is the job version it runs; Attempt counts the runs of
	// this slot (0 first).
	Version int
	Attempt int
	State   InstanceState
	// Healthy: every task with a check passes it, and the rest run.
	Healthy      bool
	HealthySince time.Time
	StartedAt    time.Time
	EndedAt      time.Time
	// Stopping: the runner asked for it to be killed.
	Stopping bool
	// Lost: it ended because its agent was lost or its launch never
	// reached one, not by anything it did: it is replaced at once, and
	// that is no restart.
	Lost bool
}

// ID is the instance's identity and the prefix of its tasks' IDs:
// job.group.index.vVersion.attempt.
func (in Instance) ID(job string) string {
	return fmt.Sprintf("%s.%s.%d.v%d.%d", job, in.Group, in.Index, in.Version, in.Attempt)
}

// ParseInstanceID reads back what ID wrote.
func ParseInstanceID(id string) (job string, in Instance, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 5 || !strings.HasPrefix(parts[3], "v") {
		return "", Instance{}, false
	}
	idx, err1 := strconv.Atoi(parts[2])
	ver, err2 := strconv.Atoi(parts[3][1:])
	att, err3 := strconv.Atoi(parts[4])
	if err1 != nil || err2 != nil || err3 != nil || idx < 0 || ver < 1 || att < 0 {
		return "", Instance{}, false
	}
	return parts[0], Instance{Slot: Slot{Group: parts[1], Index: idx}, Version: ver, Attempt: att}, true
}
