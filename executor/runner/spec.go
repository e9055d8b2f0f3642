package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Limits bound a task's resources; a zero field means unlimited.
type Limits struct {
	// CPUMilli is the CPU quota in thousandths of a CPU (cgroups only).
	CPUMilli int64 `json:"cpu_milli,omitempty"`
	// MemMiB is the memory limit in MiB: cgroup memory.max, or in the
	// portable mode the most resident memory all the task's processes may
	// hold together before they are killed.
	MemMiB int64 `json:"mem_mib,omitempty"`
	// OpenFiles is the task's RLIMIT_NOFILE (capped at the shim's hard
	// limit); 0 leaves the inherited limit.
	OpenFiles uint64 `json:"open_files,omitempty"`
}

// Spec describes one task to run.
type Spec struct {
	// TaskID is the task's ID, for logs and the shim's records.
	TaskID string
	// Name is the sandbox directory's name under Config.WorkDir: ASCII
	// letters, digits and ". _ : -", not starting with a dot, at most
	// MaxNameLen bytes. It also names the task's cgroup and its control
	// directory.
	Name string
	// Command is what runs. Command.User is the user it runs as (see
	// LookupUser), who then owns the sandbox; empty, the agent's own user.
	Command protocol.CommandInfo
	// Env is added by the agent (task id, ports, ...) over Command.Env. The
	// runner adds ALLOT_SANDBOX, the sandbox's absolute path.
	Env    map[string]string
	Limits Limits
	// Grace is the time between SIGTERM and SIGKILL on a kill; 0 means
	// Config.DefaultGrace.
	Grace time.Duration
}

// MaxNameLen is the longest sandbox name.
const MaxNameLen = 200

// EnvSandbox is the variable holding the sandbox's absolute path in the
// task's environment.
const EnvSandbox = "ALLOT_SANDBOX"

// Files in the control directory (control.go), then in the sandbox.
const (
	specFile   = "spec.json"
	shimFile   = "shim.json"
	exitFile   = "exit.json"
	killFile   = "kill.json" // a kill's own grace period, read by the shim on SIGTERM
	shimLog    = "shim.log"
	stdoutFile = "stdout"
	stderrFile = "stderr"
)

// defaultPath is the PATH of a task that sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// checkName validates a sandbox name.
func checkName(name string) error {
	if name == "" || len(name) > MaxNameLen || name[0] == '.' {
		return fmt.Errorf("%w: sandbox name %q must be 1 to %d bytes not starting with a dot", ErrInvalidSpec, name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == ':', c == '-':
		default:
			return fmt.Errorf("%w: sandbox name %q may hold only letters, digits and . _ : -", ErrInvalidSpec, name)
		}
	}
	return nil
}

// validate checks s. Output paths that leave the sandbox are reported as
// ErrSandboxEscape before anything else about the command.
func (s Spec) validate() error {
	if err := checkName(s.Name); err != nil {
		return err
	}
	for i, u := range s.Command.URIs {
		if u.OutputFile != "" {
			if err := checkRelPath(u.OutputFile); err != nil {
				return fmt.Errorf("uri %d: output file: %w", i, err)
			}
		}
	}
	if err := s.Command.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	for k, v := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return fmt.Errorf("%w: env %q: empty, or contains '=' or NUL", ErrInvalidSpec, k)
		}
	}
	if s.Limits.CPUMilli < 0 || s.Limits.MemMiB < 0 {
		return fmt.Errorf("%w: negative limits", ErrInvalidSpec)
	}
	if s.Grace < 0 {
		return fmt.Errorf("%w: negative grace", ErrInvalidSpec)
	}
	return nil
}

// checkRelPath rejects a sandbox-relative path that is empty, absolute,
// contains a ".." element or lies in the reserved legacy control directory.
func checkRelPath(p string) error {
	if p == "" || strings.ContainsRune(p, 0) {
		return fmt.Errorf("%w: empty path or NUL in %q", ErrSandboxEscape, p)
	}
	if path.IsAbs(p) {
		return fmt.Errorf("%w: %q is absolute", ErrSandboxEscape, p)
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return fmt.Errorf("%w: %q contains a .. element", ErrSandboxEscape, p)
	}
	clean := path.Clean(p)
	if clean == "." {
		return fmt.Errorf("%w: %q names the sandbox itself", ErrSandboxEscape, p)
	}
	if clean == legacyControlDir || strings.HasPrefix(clean, legacyControlDir+"/") {
		return fmt.Errorf("%w: %q is in the reserved %s directory", ErrSandboxEscape, p, legacyControlDir)
	}
	return nil
}

// shimSpec is what Start hands the shim, as spec.json in the task's
// control directory.
type shimSpec struct {
	TaskID string `json:"task_id"`
	// Sandbox is the task's sandbox. Specs of earlier versions have none:
	// their control directory was in the sandbox.
	Sandbox string `json:"sandbox,omitempty"`
	// User is who the task runs as; nil for the agent's own user.
	User *Credential `json:"user,omitempty"`

	Shell bool     `json:"shell,omitempty"`
	Value string   `json:"value"`
	Args  []string `json:"args,omitempty"`
	// Env is the task's whole environment, KEY=VALUE, sorted.
	Env    []string      `json:"env"`
	Limits Limits        `json:"limits"`
	Grace  time.Duration `json:"grace"`
	// Isolation is cgroups or portable, resolved by the runner.
	Isolation Isolation `json:"isolation"`
	// CgroupMount and CgroupGroup place the task's cgroup (cgroups only):
	// CgroupGroup under the cgroup v2 mount CgroupMount, or, where the
	// host mounts cgroup v1, under each hierarchy of CgroupV1 (memory,
	// cpu).
	CgroupMount string   `json:"cgroup_mount,omitempty"`
	CgroupGroup string   `json:"cgroup_group,omitempty"`
	CgroupV1    []string `json:"cgroup_v1,omitempty"`
}

// taskEnv builds the task's environment: a minimal base, then Command.Env,
// then Spec.Env, then ALLOT_SANDBOX.
func taskEnv(s Spec, sandbox string) []string {
	env := map[string]string{"PATH": defaultPath, "HOME": sandbox, "PWD": sandbox}
	maps.Copy(env, s.Command.Env)
	maps.Copy(env, s.Env)
	env[EnvSandbox] = sandbox
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// lookEnv returns the value of key in a KEY=VALUE list.
func lookEnv(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// errNotFound marks an executable that is not found, for the shim's message.
var errNotFound = errors.New("executable file not found")

// resolveCommand returns the path and argv of the task's process: /bin/sh
// -c for a shell command; otherwise Value, taken relative to the sandbox
// when it contains a slash and looked up in the task's PATH when not.
func resolveCommand(sp shimSpec, sandbox string) (string, []string, error) {
	if sp.Shell {
		return "/bin/sh", []string{"sh", "-c", sp.Value}, nil
	}
	argv := append([]string{sp.Value}, sp.Args...)
	if strings.Contains(sp.Value, "/") {
		p := sp.Value
		if !filepath.IsAbs(p) {
			p = filepath.Join(sandbox, p)
		}
		if err := checkExecutable(p); err != nil {
			return "", nil, fmt.Errorf("%q: %w", sp.Value, err)
		}
		return p, argv, nil
	}
	for _, dir := range filepath.SplitList(lookEnv(sp.Env, "PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, sp.Value)
		if checkExecutable(p) == nil {
			return p, argv, nil
		}
	}
	return "", nil, fmt.Errorf("%q: %w in PATH", sp.Value, errNotFound)
}

// checkExecutable reports why p cannot be executed, if it cannot.
func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errNotFound
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return errors.New("permission denied: not executable")
	}
	return nil
}
