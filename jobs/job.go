package jobs

import (
	"time"

	"github.com/allot-project/allot/protocol"
)

// Type is what a job is for.
type Type string

// Job types.
const (
	// Batch runs each instance until it finishes; a finished instance is
	// done, a failed one restarts per the group's policy.
	Batch Type = "batch"
	// Service keeps Count instances running: one that ends for any reason
	// restarts per the group's policy.
	Service Type = "service"
)

// Job is one job file's job.
type Job struct {
	Name string
	// Role is the role the job's tasks run in (the runner's own when
	// empty).
	Role string
	Type Type
	// Groups are the job's task groups; an instance of a group is its
	// tasks, launched together on one agent.
	Groups []Group
	// Update is how a service moves to a new version (services only).
	Update Update
	// Periodic, when set, makes a batch job run on a schedule.
	Periodic *Periodic
}

// Group is a set of tasks run together, Count times.
type Group struct {
	Name  string
	Count int
	// Pos is where the group is defined, for errors found later.
	Pos Position `json:"-"`
	// Constraints hold for every instance (the job's and the group's).
	Constraints []protocol.Constraint
	// Spread names attributes whose values the instances are spread
	// over, as evenly as the offers allow.
	Spread  []string
	Restart Restart
	Tasks   []Task
}

// Position is a place in a job file.
type Position struct {
	File         string
	Line, Column int
}

// Task is one command of a group.
type Task struct {
	Name string
	// Command is the executable, run with Args; with Shell it is a
	// command line for /bin/sh -c.
	Command string
	Args    []string
	Shell   bool
	Env     map[string]string
	User    string
	// Artifacts are fetched into the sandbox before the command starts.
	Artifacts []protocol.URI
	Resources Resources
	// Check is the health check the agent runs (services).
	Check *protocol.HealthCheck
	// KillGrace is the time between SIGTERM and SIGKILL when the task is
	// stopped (the agent's default when 0).
	KillGrace time.Duration
}

// Resources is what one task asks for.
type Resources struct {
	CPUMilli int64
	MemMiB   int64
	DiskMiB  int64
	// Ports is how many ports the task needs; they reach it as $PORT0,
	// $PORT1, ...
	Ports int
	// GPUs is whole devices; GPUMilli a share of one.
	GPUs     int
	GPUMilli int64
}

// Restart says what happens when an instance ends when it should not (a
// service's instance ending at all, a batch instance failing).
type Restart struct {
	// Attempts restarts are allowed within Interval.
	Attempts int
	Interval time.Duration
	// Delay before the first restart, multiplied by Backoff for each
	// further one, up to MaxDelay.
	Delay    time.Duration
	Backoff  float64
	MaxDelay time.Duration
	// Mode is what happens when the attempts run out.
	Mode RestartMode
}

// RestartMode is what a group does when its restart attempts run out.
type RestartMode string

// Restart modes.
const (
	// RestartFail marks the job failed: nothing of it is restarted any
	// more.
	RestartFail RestartMode = "fail"
	// RestartDelay waits until the interval has passed and tries again.
	RestartDelay RestartMode = "delay"
)

// Update is how a service moves to a new version.
type Update struct {
	// MaxParallel instances are replaced at a time.
	MaxParallel int
	// MinHealthyTime an instance must be healthy (or running, without a
	// check) before it counts as healthy.
	MinHealthyTime time.Duration
	// HealthyDeadline is how long a new instance has to become healthy
	// before the update counts as failed.
	HealthyDeadline time.Duration
	// AutoRevert goes back to the last version that was healthy when an
	// update fails.
	AutoRevert bool
}

// Periodic runs a batch job on a cron schedule.
type Periodic struct {
	// Cron is a standard five-field cron expression (or @hourly, ...).
	Cron string
	// ProhibitOverlap skips a run while the previous one still runs.
	ProhibitOverlap bool
	// TimeZone names the zone the schedule is read in (UTC when empty).
	TimeZone string
}
