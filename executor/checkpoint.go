package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// The checkpoint lives in the work directory:
//
//	WorkDir/agent.json          the agent ID (agentRecord)
//	WorkDir/agent.lock          held while an agent runs
//	WorkDir/tasks/<name>.json   one taskRecord per task the agent still owns
//	WorkDir/sandboxes/<name>/   the task's sandbox (executor/runner)
//
// Every file is replaced atomically (temporary file, fsync, rename, fsync
// of the directory), so a crash leaves either the old or the new version.
// A task record holds the task's state and its unacknowledged status
// updates together, so "the final status was enqueued" and the update
// itself are always written as one: a restarted agent reports a task's end
// exactly once. The record is deleted once the task is terminal and every
// update of it was acknowledged; its sandbox stays.
const (
	agentFile   = "agent.json"
	lockFile    = "agent.lock"
	tasksDir    = "tasks"
	sandboxDir  = "sandboxes"
	recordExt   = ".json"
	tempPattern = ".tmp-"
)

// agentRecord is WorkDir/agent.json.
type agentRecord struct {
	AgentID      protocol.AgentID `json:"agent_id"`
	Hostname     string           `json:"hostname,omitempty"`
	RegisteredAt int64            `json:"registered_at"`
}

// taskRecord is what the agent keeps of one task across restarts.
type taskRecord struct {
	// Name names the record file and the sandbox directory.
	Name        string               `json:"name"`
	FrameworkID protocol.FrameworkID `json:"framework_id"`
	Info        protocol.TaskInfo    `json:"info"`
	// Unknown marks a record made for a kill of a task the agent never
	// had; it has no sandbox.
	Unknown bool `json:"unknown,omitempty"`
	// State is the state of the latest status update created. It is
	// terminal once the final update is queued.
	State protocol.TaskState `json:"state"`
	// KillRequested is set when a kill was received; KillReason is the
	// reason the final KILLED status carries.
	KillRequested bool   `json:"kill_requested,omitempty"`
	KillReason    string `json:"kill_reason,omitempty"`
	// Latest is the latest status update created.
	Latest *protocol.StatusUpdate `json:"latest,omitempty"`
	// Queue are the updates the master has not acknowledged, oldest first.
	Queue []protocol.StatusUpdate `json:"queue,omitempty"`
}

// checkpoint reads and writes the files of one work directory.
type checkpoint struct {
	dir string
	log hclog.Logger
}

func (c checkpoint) tasksPath() string { return filepath.Join(c.dir, tasksDir) }

func (c checkpoint) taskPath(name string) string {
	return filepath.Join(c.tasksPath(), name+recordExt)
}

// init creates the checkpoint's directories.
func (c checkpoint) init() error {
	for _, d := range []string{c.dir, c.tasksPath(), filepath.Join(c.dir, sandboxDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%w: %w", ErrCheckpoint, err)
		}
	}
	return nil
}

// loadAgent reads the agent record; found is false when there is none.
func (c checkpoint) loadAgent() (rec agentRecord, found bool, err error) {
	data, err := os.ReadFile(filepath.Join(c.dir, agentFile))
	if errors.Is(err, fs.ErrNotExist) {
		return agentRecord{}, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err == nil && !protocol.ValidID(string(rec.AgentID)) {
		err = fmt.Errorf("agent id %q is not valid", rec.AgentID)
	}
	if err != nil {
		return agentRecord{}, false, fmt.Errorf("%w: %s: %w", ErrCheckpoint, agentFile, err)
	}
	return rec, true, nil
}

// saveAgent writes the agent record durably.
func (c checkpoint) saveAgent(rec agentRecord) error {
	return c.write(filepath.Join(c.dir, agentFile), rec)
}

// removeAgent deletes the agent record.
func (c checkpoint) removeAgent() error {
	return c.remove(filepath.Join(c.dir, agentFile))
}

// loadTasks reads every task record. A record that cannot be read is
// logged and moved aside (renamed *.corrupt) so it is not read again;
// leftover temporary files are removed.
func (c checkpoint) loadTasks() ([]taskRecord, error) {
	entries, err := os.ReadDir(c.tasksPath())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	var out []taskRecord
	for _, e := range entries {
		p := filepath.Join(c.tasksPath(), e.Name())
		if strings.Contains(e.Name(), recordExt+tempPattern) {
			_ = os.Remove(p)
			continue
		}
		name, ok := strings.CutSuffix(e.Name(), recordExt)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		var rec taskRecord
		data, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(data, &rec)
		}
		if err == nil {
			err = rec.check(name)
		}
		if err != nil {
			c.log.Error("unreadable task record moved aside", "file", p, "error", err)
			_ = os.Rename(p, p+".corrupt")
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// check verifies a record read from file name.json.
func (r *taskRecord) check(name string) error {
	switch {
	case r.Name != name:
		return fmt.Errorf("record names %q", r.Name)
	case !protocol.ValidID(string(r.FrameworkID)) || !protocol.ValidID(string(r.Info.TaskID)):
		return errors.New("invalid framework or task id")
	case !r.State.Valid():
		return fmt.Errorf("unknown state %q", r.State)
	}
	return nil
}

// saveTask writes a task record durably.
func (c checkpoint) saveTask(rec *taskRecord) error {
	return c.write(c.taskPath(rec.Name), rec)
}

// removeTask deletes a task record.
func (c checkpoint) removeTask(name string) error {
	return c.remove(c.taskPath(name))
}

// write replaces path with v as JSON: temporary file, fsync, rename, fsync
// of the directory.
func (c checkpoint) write(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %w", ErrCheckpoint, filepath.Base(path), err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+tempPattern+"*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	tmp := f.Name()
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%w: write %s: %w", ErrCheckpoint, filepath.Base(path), err)
	}
	return nil
}

// remove deletes path (a missing file is fine) and syncs its directory.
func (c checkpoint) remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
