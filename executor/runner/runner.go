package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// Runner prepares, starts and reattaches tasks in sandboxes under one work
// directory. Its methods may be called concurrently, for different
// sandboxes.
type Runner struct {
	cfg     Config
	log     hclog.Logger
	workDir string
	// controlDir holds each task's control directory (control.go).
	controlDir string
	// isolation is the resolved mode, cgroups or portable.
	isolation   Isolation
	cgroupMount string   // cgroup v2
	cgroupV1    []string // or the v1 hierarchies of memory and cpu

	// watch guards closed: an observer records a task's end under its
	// read lock, so once Close holds it no observer is inside a sandbox.
	watch  sync.RWMutex
	closed bool
}

// Close ends the runner's watch over its tasks, which keep running: a
// reattached task is no longer polled, and the end of a task's shim is no
// longer recorded, so nothing of this runner writes into a sandbox once
// Close has returned. A later runner on the same work directory finds the
// tasks again with Reattach. Their Done channels stay open.
func (r *Runner) Close() {
	r.watch.Lock()
	r.closed = true
	r.watch.Unlock()
}

// New checks cfg, creates the work and control directories and resolves
// the isolation mode: with auto, cgroups are used when CgroupParent can be
// set up with the memory and cpu controllers, in cgroup v2 or else in the
// v1 hierarchies, and the reason they cannot is logged once otherwise.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := platformSupported(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	dir, err := makeDir(cfg.WorkDir, workDirMode)
	if err != nil {
		return nil, fmt.Errorf("%w: work dir: %w", ErrConfig, err)
	}
	ctl, err := makeDir(cfg.ControlDir, controlDirMode)
	if err != nil {
		return nil, fmt.Errorf("%w: control dir: %w", ErrConfig, err)
	}
	if err := checkControlDir(dir, ctl); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, log: cfg.Logger.Named("runner"), workDir: dir, controlDir: ctl, isolation: IsolationPortable}
	if n, err := restrictSandboxes(dir); err != nil {
		return nil, fmt.Errorf("%w: work dir: %w", ErrConfig, err)
	} else if n > 0 {
		r.log.Info("sandboxes of earlier versions made private", "sandboxes", n)
	}
	if cfg.Isolation != IsolationPortable {
		mount, err := setupCgroupParent(cfg.CgroupParent)
		var v1 []string
		if err != nil {
			var errV1 error
			if v1, errV1 = setupCgroupV1Parent(cfg.CgroupParent); errV1 == nil {
				err = nil
			} else {
				err = fmt.Errorf("cgroup v2: %w; cgroup v1: %w", err, errV1)
			}
		}
		switch {
		case err == nil:
			r.isolation, r.cgroupMount, r.cgroupV1 = IsolationCgroups, mount, v1
		case cfg.Isolation == IsolationCgroups:
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
		default:
			r.log.Info("cgroups not usable, using portable isolation", "error", err)
		}
	}
	r.log.Debug("runner ready", "work_dir", dir, "control_dir", ctl, "isolation", r.isolation)
	return r, nil
}

// Modes of the runner's directories: tasks may pass through the work
// directory to their sandbox but not list it, and may not enter the
// control directory at all.
const (
	workDirMode    = 0o711
	controlDirMode = 0o700
)

// makeDir creates dir with its parents, sets its mode (whatever the umask
// or an earlier version left) and returns its absolute path without
// symlinks.
func makeDir(dir string, mode os.FileMode) (string, error) {
	dir, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(dir, mode)
	}
	if err == nil {
		err = os.Chmod(dir, mode)
	}
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	return dir, err
}

// Isolation returns the mode tasks are started with: cgroups or portable.
func (r *Runner) Isolation() Isolation { return r.isolation }

// Prepare creates the sandbox (if needed), fetches the command's URIs into
// it and hands it to the task's user (see handOver). Errors wrap
// ErrInvalidSpec, ErrFetch or ErrSandboxEscape; once the sandbox exists it
// is returned even with an error. Preparing a sandbox whose task was
// already started fails.
func (r *Runner) Prepare(ctx context.Context, s Spec) (sandbox string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := s.validate(); err != nil {
		return "", err
	}
	cred, err := LookupUser(s.Command.User)
	if err != nil {
		return "", err
	}
	sandbox, _, err = r.makeSandbox(s.Name)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(control(r.findControl(s.Name, sandbox), specFile)); err == nil {
		return sandbox, fmt.Errorf("%w: a task was already started in sandbox %s", ErrInvalidSpec, s.Name)
	}
	if len(s.Command.URIs) > 0 {
		if err := r.fetchAll(ctx, s, sandbox, cred); err != nil {
			return sandbox, err
		}
	}
	if err := handOver(sandbox, cred); err != nil {
		return sandbox, err
	}
	r.log.Debug("sandbox prepared", "task_id", s.TaskID, "sandbox", sandbox, "uris", len(s.Command.URIs), "user", cred.name())
	return sandbox, nil
}

// fetchAll fetches the command's URIs into the sandbox. Fetching runs as
// the agent, which must not write into a directory a task's user could
// change meanwhile: the sandbox must still be the agent's. Downloads are
// staged in its reserved .allot directory, on the sandbox's file system so
// that they can be renamed into place, and removed with it.
func (r *Runner) fetchAll(ctx context.Context, s Spec, sandbox string, cred *Credential) error {
	if err := checkUnowned(sandbox); err != nil {
		return err
	}
	staging := filepath.Join(sandbox, legacyControlDir)
	if err := mkdirStrict(staging); err != nil {
		return fmt.Errorf("%w: staging: %w", ErrFetch, err)
	}
	defer os.RemoveAll(staging)
	links := false
	for i, u := range s.Command.URIs {
		l, err := r.fetch(ctx, sandbox, staging, u, cred)
		links = links || l
		if err != nil && !errors.Is(err, ErrFetch) && !errors.Is(err, ErrSandboxEscape) {
			err = fmt.Errorf("%w: %w", ErrFetch, err) // the sandbox's filesystem failed
		}
		if err != nil {
			return fmt.Errorf("uri %d (%s): %w", i, redact(u.Value), err)
		}
	}
	if links {
		return auditSymlinks(sandbox)
	}
	return nil
}

// Start launches the shim for s in its own session and returns once the
// shim has started the task's process. When the process could not be
// started (executable not found, not executable, ...) the error wraps
// ErrStart and the control directory records the exit (Reason
// command_failed) for Reattach. A sandbox runs one task: starting a second time fails with
// ErrInvalidSpec. If ctx ends first, the shim is told to kill the task and
// ctx's error is returned.
func (r *Runner) Start(ctx context.Context, s Spec) (*Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	cred, err := LookupUser(s.Command.User)
	if err != nil {
		return nil, err
	}
	sandbox, ctl, err := r.makeSandbox(s.Name)
	if err != nil {
		return nil, err
	}
	if err := handOver(sandbox, cred); err != nil {
		return nil, err
	}
	grace := s.Grace
	if grace == 0 {
		grace = r.cfg.DefaultGrace
	}
	sp := shimSpec{
		TaskID: s.TaskID, Sandbox: sandbox, User: cred, Shell: s.Command.Shell, Value: s.Command.Value, Args: s.Command.Args,
		Env: taskEnv(s, sandbox), Limits: s.Limits, Grace: grace, Isolation: r.isolation,
	}
	if r.isolation == IsolationCgroups {
		sp.CgroupMount, sp.CgroupGroup, sp.CgroupV1 = r.cgroupMount, path.Join(r.cfg.CgroupParent, s.Name), r.cgroupV1
	}
	created, err := writeJSONOnce(control(ctl, specFile), sp)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, fmt.Errorf("%w: a task was already started in sandbox %s", ErrInvalidSpec, s.Name)
	}
	return r.launch(ctx, s, sandbox, ctl, sp)
}

// makeSandbox creates WorkDir/name and its control directory
// ControlDir/name, refusing anything in their place that is not a
// directory (a symlink, say). A new sandbox is the agent's, mode 0700,
// until handOver gives it to the task's user.
func (r *Runner) makeSandbox(name string) (sandbox, ctl string, err error) {
	sandbox, ctl = filepath.Join(r.workDir, name), r.controlOf(name)
	for _, d := range []string{sandbox, ctl} {
		if err := mkdirStrict(d); err != nil {
			return "", "", fmt.Errorf("sandbox %s: %w", name, err)
		}
	}
	return sandbox, ctl, nil
}

// mkdirStrict creates the directory d, mode 0700, unless there is one:
// anything else in its place (a symlink, say) is refused.
func mkdirStrict(d string) error {
	err := os.Mkdir(d, 0o700)
	if errors.Is(err, fs.ErrExist) {
		var fi os.FileInfo
		if fi, err = os.Lstat(d); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%w: %s exists and is not a directory", ErrSandboxEscape, d)
		}
	}
	return err
}
