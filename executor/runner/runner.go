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
	// isolation is the resolved mode, cgroups or portable.
	isolation   Isolation
	cgroupMount string

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

// New checks cfg, creates the work directory and resolves the isolation
// mode: with auto, cgroup v2 is used when it has the memory and cpu
// controllers and CgroupParent can be set up, and the reason it cannot is
// logged once otherwise.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := platformSupported(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	dir, err := filepath.Abs(cfg.WorkDir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: work dir: %w", ErrConfig, err)
	}
	r := &Runner{cfg: cfg, log: cfg.Logger.Named("runner"), workDir: dir, isolation: IsolationPortable}
	if cfg.Isolation != IsolationPortable {
		mount, err := setupCgroupParent(cfg.CgroupParent)
		switch {
		case err == nil:
			r.isolation, r.cgroupMount = IsolationCgroups, mount
		case cfg.Isolation == IsolationCgroups:
			return nil, fmt.Errorf("%w: cgroup v2: %w", ErrUnsupported, err)
		default:
			r.log.Info("cgroup v2 not usable, using portable isolation", "error", err)
		}
	}
	r.log.Debug("runner ready", "work_dir", dir, "isolation", r.isolation)
	return r, nil
}

// Isolation returns the mode tasks are started with: cgroups or portable.
func (r *Runner) Isolation() Isolation { return r.isolation }

// Prepare creates the sandbox (if needed) and fetches the command's URIs
// into it. Errors wrap ErrInvalidSpec, ErrFetch or ErrSandboxEscape; once
// the sandbox exists it is returned even with an error. Preparing a sandbox
// whose task was already started fails.
func (r *Runner) Prepare(ctx context.Context, s Spec) (sandbox string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := s.validate(); err != nil {
		return "", err
	}
	sandbox, err = r.makeSandbox(s.Name)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(control(sandbox, specFile)); err == nil {
		return sandbox, fmt.Errorf("%w: a task was already started in sandbox %s", ErrInvalidSpec, s.Name)
	}
	links := false
	for i, u := range s.Command.URIs {
		l, err := r.fetch(ctx, sandbox, u)
		links = links || l
		if err != nil && !errors.Is(err, ErrFetch) && !errors.Is(err, ErrSandboxEscape) {
			err = fmt.Errorf("%w: %w", ErrFetch, err) // the sandbox's filesystem failed
		}
		if err != nil {
			return sandbox, fmt.Errorf("uri %d (%s): %w", i, redact(u.Value), err)
		}
	}
	if links {
		if err := auditSymlinks(sandbox); err != nil {
			return sandbox, err
		}
	}
	r.log.Debug("sandbox prepared", "task_id", s.TaskID, "sandbox", sandbox, "uris", len(s.Command.URIs))
	return sandbox, nil
}

// Start launches the shim for s in its own session and returns once the
// shim has started the task's process. When the process could not be
// started (executable not found, not executable, ...) the error wraps
// ErrStart and the sandbox records the exit (Reason command_failed) for
// Reattach. A sandbox runs one task: starting a second time fails with
// ErrInvalidSpec. If ctx ends first, the shim is told to kill the task and
// ctx's error is returned.
func (r *Runner) Start(ctx context.Context, s Spec) (*Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	sandbox, err := r.makeSandbox(s.Name)
	if err != nil {
		return nil, err
	}
	grace := s.Grace
	if grace == 0 {
		grace = r.cfg.DefaultGrace
	}
	sp := shimSpec{
		TaskID: s.TaskID, Shell: s.Command.Shell, Value: s.Command.Value, Args: s.Command.Args,
		Env: taskEnv(s, sandbox), Limits: s.Limits, Grace: grace, Isolation: r.isolation,
	}
	if r.isolation == IsolationCgroups {
		sp.CgroupMount, sp.CgroupGroup = r.cgroupMount, path.Join(r.cfg.CgroupParent, s.Name)
	}
	created, err := writeJSONOnce(control(sandbox, specFile), sp)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, fmt.Errorf("%w: a task was already started in sandbox %s", ErrInvalidSpec, s.Name)
	}
	return r.launch(ctx, s, sandbox)
}

// makeSandbox creates WorkDir/name and its control directory, refusing
// anything in their place that is not a directory (a symlink, say).
func (r *Runner) makeSandbox(name string) (string, error) {
	sandbox := filepath.Join(r.workDir, name)
	for _, d := range []struct {
		path string
		perm os.FileMode
	}{{sandbox, 0o755}, {filepath.Join(sandbox, controlDir), 0o700}} {
		err := os.Mkdir(d.path, d.perm)
		if errors.Is(err, fs.ErrExist) {
			var fi os.FileInfo
			if fi, err = os.Lstat(d.path); err == nil && !fi.IsDir() {
				err = fmt.Errorf("%w: %s exists and is not a directory", ErrSandboxEscape, d.path)
			}
		}
		if err != nil {
			return "", fmt.Errorf("sandbox %s: %w", name, err)
		}
	}
	return sandbox, nil
}
