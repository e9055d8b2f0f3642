package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// The checkpoint lives in the work directory:
//
//	WorkDir/agent.json          the agent ID (agentRecord)
//	WorkDir/agent.lock          held while an agent runs
//	WorkDir/tasks.journal       the taskRecord of every task the agent still owns
//	WorkDir/frameworks_gone.json  the frameworks shut down (sandbox_gc_gone.go)
//	WorkDir/sandboxes/<name>/   the task's sandbox (executor/runner), its user's
//	WorkDir/control/<name>/     the records of the task's shim (executor/runner)
//
// Tasks may run as users other than the agent's: the work directory and
// sandboxes/ are mode 0711, so each user reaches its sandbox (mode 0700)
// but lists nothing, and the files here and control/ (mode 0700) are the
// agent's alone. A sandbox is named after its task record, and so is its
// control directory: a restarted agent finds both from the journal.
//
// agent.json is written rarely and replaced atomically (temporary file,
// fsync, rename, fsync of the directory), so a crash leaves either the old
// or the new version. Task records change with every status update and
// acknowledgement, so they go to one append-only journal (journal.go)
// instead of a file each: the agent's flusher appends every record change
// that accumulated while its previous fsync ran with one write and one
// fsync (group commit), off the task store's lock (flusher.go). A file per
// record cost two fsyncs per change, serialized under the lock.
//
// A task record holds the task's state and its unacknowledged status
// updates together, and is one journal entry, so "the final status was
// enqueued" and the update itself are always written as one: a restarted
// agent reports a task's end exactly once. A removal entry drops the
// record once the task is terminal and every update of it was
// acknowledged; its sandbox stays, until the sandbox collector removes it
// (sandbox_gc.go).
//
// Earlier versions kept one file per record, WorkDir/tasks/<name>.json; an
// agent that finds them folds them into the journal when it starts.
const (
	agentFile = "agent.json"
	lockFile  = "agent.lock"
	// lockWait is how long a starting agent tries a taken lock again
	// (lockWorkDir).
	lockWait   = 2 * time.Second
	tasksDir   = "tasks"
	sandboxDir = "sandboxes"
	controlDir = "control"
	// workDirMode lets task users pass through the work directory to
	// their sandboxes without listing it.
	workDirMode = 0o711
	recordExt   = ".json"
	tempPattern = ".tmp-"
	corruptExt  = ".corrupt"
)

// agentRecord is WorkDir/agent.json.
type agentRecord struct {
	AgentID      protocol.AgentID `json:"agent_id"`
	Hostname     string           `json:"hostname,omitempty"`
	RegisteredAt int64            `json:"registered_at"`
}

// taskRecord is what the agent keeps of one task across restarts.
type taskRecord struct {
	// Name names the record and the sandbox directory.
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

// init creates the work directory with the mode tasks need (whatever the
// umask or an earlier version left). The runner makes sandboxes/ and
// control/.
func (c checkpoint) init() error {
	if err := os.MkdirAll(c.dir, workDirMode); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := os.Chmod(c.dir, workDirMode); err != nil {
		// Only an agent that does not own its work directory gets here,
		// and it runs tasks as itself: they need no other mode.
		c.log.Warn("cannot set the work dir's mode", "work_dir", c.dir, "error", err)
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
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("%w: encode %s: %w", ErrCheckpoint, agentFile, err)
	}
	if err := writeFileAtomic(filepath.Join(c.dir, agentFile), append(data, '\n')); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrCheckpoint, agentFile, err)
	}
	return nil
}

// removeAgent deletes the agent record.
func (c checkpoint) removeAgent() error {
	path := filepath.Join(c.dir, agentFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := syncDir(c.dir); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return nil
}

// openTasks opens the task journal and returns the task records it holds
// (see openJournal).
func (c checkpoint) openTasks() (*journal, []taskRecord, error) {
	return openJournal(c.dir, c.log)
}

// check verifies a task record read back.
func (r *taskRecord) check() error {
	switch {
	case r.Name == "" || strings.ContainsAny(r.Name, `/\`) || r.Name[0] == '.':
		return fmt.Errorf("record name %q", r.Name)
	case !protocol.ValidID(string(r.FrameworkID)) || !protocol.ValidID(string(r.Info.TaskID)):
		return errors.New("invalid framework or task id")
	case !r.State.Valid():
		return fmt.Errorf("unknown state %q", r.State)
	}
	return nil
}

// loadLegacyTasks reads the per-task record files of earlier versions in
// dir, if there are any. A record that cannot be read is logged and moved
// aside (renamed *.corrupt) so it is not read again; leftover temporary
// files are removed.
func loadLegacyTasks(dir string, log hclog.Logger) ([]taskRecord, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	var out []taskRecord
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
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
		if err == nil && rec.Name != name {
			err = fmt.Errorf("record names %q", rec.Name)
		}
		if err == nil {
			err = rec.check()
		}
		if err != nil {
			log.Error("unreadable task record moved aside", "file", p, "error", err)
			_ = os.Rename(p, p+corruptExt)
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// removeLegacyTasks deletes the record files recs were read from, and dir
// itself unless something else (a record moved aside) is left in it.
func removeLegacyTasks(dir string, recs []taskRecord) error {
	for _, rec := range recs {
		if err := os.Remove(filepath.Join(dir, rec.Name+recordExt)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrCheckpoint, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if os.Remove(dir) == nil {
		_ = syncDir(filepath.Dir(dir))
	}
	return nil
}

// writeFileAtomic replaces path with data: temporary file, fsync, rename,
// fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+tempPattern+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
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
	}
	return err
}

// removeTemps removes the temporary files a crash left while replacing
// dir/base.
func removeTemps(dir, base string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+tempPattern) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
