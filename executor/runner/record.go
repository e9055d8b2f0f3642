package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// shimRecord is shim.json in the task's control directory: who supervises
// the task. The shim writes it once before it starts the task (TaskPid 0)
// and again after.
type shimRecord struct {
	ShimPid int `json:"shim_pid"`
	// ShimStart is the shim's start time from /proc/<pid>/stat, in clock
	// ticks since boot; with the pid it identifies the process.
	ShimStart uint64 `json:"shim_start"`
	TaskPid   int    `json:"task_pid,omitempty"`
	TaskStart uint64 `json:"task_start,omitempty"`
	// CgroupMount, CgroupGroup and CgroupV1 name the task's cgroup, if it
	// has one, as in shimSpec.
	CgroupMount string   `json:"cgroup_mount,omitempty"`
	CgroupGroup string   `json:"cgroup_group,omitempty"`
	CgroupV1    []string `json:"cgroup_v1,omitempty"`
}

// readyMsg is what the shim sends Start over its pipe once the task runs,
// or failed to start.
type readyMsg struct {
	TaskPid int    `json:"task_pid,omitempty"`
	Error   string `json:"error,omitempty"`
}

// writeTemp writes v as JSON to a synced temporary file next to path and
// returns its name.
func writeTemp(path string, v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeJSONAtomic replaces path with v as JSON, durably: temporary file,
// fsync, rename, fsync of the directory.
func writeJSONAtomic(path string, v any) error {
	tmp, err := writeTemp(path, v)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return syncDir(filepath.Dir(path))
}

// writeJSONOnce writes v to path like writeJSONAtomic unless path exists,
// and reports whether it wrote it.
func writeJSONOnce(path string, v any) (bool, error) {
	tmp, err := writeTemp(path, v)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return true, syncDir(filepath.Dir(path))
}

// readJSON decodes path into v; a missing file gives an error matching
// fs.ErrNotExist. A symlink in path's place is not followed: records are
// never symlinks, and one there was put by somebody else.
func readJSON(path string, v any) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
