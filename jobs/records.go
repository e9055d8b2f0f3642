package jobs

import (
	"strconv"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// What the job runner keeps of a job in its principal's store at the
// masters, under these keys, as JSON:
//
//	jobs/<name>/spec        SpecRecord: the version to run, the versions kept, stopped
//	jobs/<name>/v/<n>       a version's job file, as submitted
//	jobs/<name>/status      StatusRecord: the runner's account of the job
//	jobs/<name>/live        LiveRecord: the instances the runner launched and has not seen replaced
//
// The runner writes them, `allot jobs` and the masters' HTTP API read them.
const (
	KeyPrefix = "jobs/"
	// KeepVersions is how many versions of a job the store keeps.
	KeepVersions = 10
)

// SpecKey, VersionKey, StatusKey and LiveKey are a job's keys.
func SpecKey(name string) string           { return KeyPrefix + name + "/spec" }
func VersionKey(name string, v int) string { return KeyPrefix + name + "/v/" + strconv.Itoa(v) }
func StatusKey(name string) string         { return KeyPrefix + name + "/status" }
func LiveKey(name string) string           { return KeyPrefix + name + "/live" }

// NameOfSpecKey returns the job a spec key is of.
func NameOfSpecKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, KeyPrefix)
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, "/spec")
	return name, ok && name != "" && !strings.Contains(name, "/")
}

// SpecRecord is what the job's owner asked for.
type SpecRecord struct {
	Version  int   `json:"version"`
	Versions []int `json:"versions"`
	Stopped  bool  `json:"stopped,omitempty"`
	// Revert marks Version as a copy of an earlier one made by a failed
	// update's revert.
	Revert bool `json:"revert,omitempty"`
	// Parent names the periodic job a run was made of, and ParentVersion
	// its version: the run is that version's job, once, without the
	// schedule.
	Parent        string    `json:"parent,omitempty"`
	ParentVersion int       `json:"parent_version,omitempty"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// StatusRecord is the runner's account of a job.
type StatusRecord struct {
	Version       int                `json:"version"`
	State         JobState           `json:"state"`
	Message       string             `json:"message,omitempty"`
	StableVersion int                `json:"stable_version,omitempty"`
	UpdateFailed  bool               `json:"update_failed,omitempty"`
	Restarts      map[string][]int64 `json:"restarts,omitempty"` // slot "group/index": Unix ns
	// LastRun is when a periodic job's schedule last fired.
	LastRun   time.Time `json:"last_run,omitzero"`
	UpdatedAt time.Time `json:"updated_at"`
}

// LiveInstance is an instance the runner launched.
type LiveInstance struct {
	ID      string        `json:"id"`
	State   InstanceState `json:"state"`
	Healthy bool          `json:"healthy,omitempty"`
	Agent   string        `json:"agent,omitempty"`
	Since   time.Time     `json:"since"`
	Message string        `json:"message,omitempty"`
	// Role and Tasks let a restarted runner find the instance's tasks.
	Role  string            `json:"role,omitempty"`
	Tasks []protocol.TaskID `json:"tasks"`
	// Version is the job version it counts as: a later version that
	// changed only its group's count keeps the instance as it is.
	Version int `json:"version,omitempty"`
}

// LiveRecord is the runner's instances of a job.
type LiveRecord struct {
	Instances []LiveInstance `json:"instances"`
}

// Shown is a job's state as people read it: stopped once asked to,
// pending until the runner recorded the version to run, else what the
// runner recorded.
func Shown(spec SpecRecord, status StatusRecord) string {
	switch {
	case spec.Stopped:
		return string(JobStopped)
	case status.Version != spec.Version || status.State == "":
		return "pending"
	}
	return string(status.State)
}
