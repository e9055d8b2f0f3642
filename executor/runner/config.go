package runner

import (
	"fmt"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Isolation selects how a task's limits are enforced.
type Isolation string

// Isolation modes.
const (
	// IsolationAuto uses cgroups (v2, or v1 where the host mounts the
	// memory and cpu controllers there) when they are usable and the
	// portable mode otherwise.
	IsolationAuto Isolation = "auto"
	// IsolationCgroups requires the memory and cpu controllers, in cgroup
	// v2 or v1; New fails without them.
	IsolationCgroups Isolation = "cgroups"
	// IsolationPortable uses a process group, rlimits and a memory watch
	// that sums the resident memory of the task's processes. CPU limits are
	// not enforced in this mode.
	IsolationPortable Isolation = "portable"
)

// Valid reports whether i is a known mode.
func (i Isolation) Valid() bool {
	return i == IsolationAuto || i == IsolationCgroups || i == IsolationPortable
}

// Defaults used for zero Config fields.
const (
	DefaultGrace        = 3 * time.Second
	DefaultCgroupParent = "/allot"
	DefaultFetchTimeout = 10 * time.Minute
)

// defaultControlDir is the name of the default ControlDir, next to WorkDir.
const defaultControlDir = "control"

// ShimCommand is the subcommand of the allot binary that runs ShimMain.
const ShimCommand = "task-shim"

// Config configures a Runner.
type Config struct {
	// WorkDir holds the sandboxes: WorkDir/<Spec.Name>. Created if missing,
	// and kept at mode 0711 so that tasks reach their own sandbox without
	// listing the others.
	WorkDir string
	// ControlDir holds the shims' records, ControlDir/<Spec.Name> for each
	// task (see the package doc), away from the sandboxes their tasks may
	// change. Created if missing, mode 0700. It must be neither WorkDir nor
	// inside it, nor hold it. Default: "control" next to WorkDir
	// (WorkDir/../control), where the agent keeps it.
	ControlDir string
	// Shim is the argv prefix that runs the shim, e.g.
	// {"/usr/bin/allot", "task-shim"}; the runner appends the sandbox path,
	// and the command must call ShimMain with the arguments after the
	// prefix.
	Shim []string
	// ShimEnv is added ("KEY=VALUE") to the environment the shim inherits
	// from the agent. The task's own environment is built from scratch.
	ShimEnv []string
	// Isolation is how limits are enforced (default auto).
	Isolation Isolation
	// CgroupParent is the cgroup path under which a cgroup per task is
	// made (default /allot), in cgroup v2 or in each v1 hierarchy. It must
	// not hold processes itself.
	CgroupParent string
	// DefaultGrace is the time between SIGTERM and SIGKILL on a kill when
	// Spec.Grace is 0 (default 3s).
	DefaultGrace time.Duration
	// HTTPClient fetches http and https URIs (default: a client with a
	// DefaultFetchTimeout timeout).
	HTTPClient *http.Client
	// Logger receives the runner's logs (nil discards them).
	Logger hclog.Logger
}

// DefaultConfig returns a Config with the defaults filled in; WorkDir and
// Shim remain to be set.
func DefaultConfig() Config {
	return Config{
		Isolation:    IsolationAuto,
		CgroupParent: DefaultCgroupParent,
		DefaultGrace: DefaultGrace,
	}
}

// Validate checks the configuration. Zero values that have a default are
// accepted.
func (c Config) Validate() error {
	if c.WorkDir == "" {
		return fmt.Errorf("%w: work dir is required", ErrConfig)
	}
	if err := checkControlDir(c.WorkDir, c.withDefaults().ControlDir); err != nil {
		return err
	}
	if len(c.Shim) == 0 || c.Shim[0] == "" {
		return fmt.Errorf("%w: shim command is required", ErrConfig)
	}
	for _, kv := range c.ShimEnv {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("%w: shim env %q is not KEY=VALUE", ErrConfig, kv)
		}
	}
	if c.Isolation != "" && !c.Isolation.Valid() {
		return fmt.Errorf("%w: unknown isolation %q", ErrConfig, c.Isolation)
	}
	if p := c.CgroupParent; p != "" && (!path.IsAbs(p) || path.Clean(p) != p || p == "/") {
		return fmt.Errorf("%w: cgroup parent %q must be a clean absolute path below /", ErrConfig, p)
	}
	if c.DefaultGrace < 0 {
		return fmt.Errorf("%w: negative default grace", ErrConfig)
	}
	return nil
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ControlDir == "" && c.WorkDir != "" {
		c.ControlDir = filepath.Join(filepath.Dir(filepath.Clean(c.WorkDir)), defaultControlDir)
	}
	if c.Isolation == "" {
		c.Isolation = d.Isolation
	}
	if c.CgroupParent == "" {
		c.CgroupParent = d.CgroupParent
	}
	if c.DefaultGrace == 0 {
		c.DefaultGrace = d.DefaultGrace
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: DefaultFetchTimeout}
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// checkControlDir refuses a control directory that shares a tree with the
// sandboxes: tasks could then reach their shims' records.
func checkControlDir(workDir, controlDir string) error {
	w, err := filepath.Abs(workDir)
	if err != nil {
		return fmt.Errorf("%w: work dir: %w", ErrConfig, err)
	}
	c, err := filepath.Abs(controlDir)
	if err != nil {
		return fmt.Errorf("%w: control dir: %w", ErrConfig, err)
	}
	if contains(w, c) || contains(c, w) {
		return fmt.Errorf("%w: control dir %s and work dir %s must not contain each other", ErrConfig, c, w)
	}
	return nil
}

// contains reports whether the absolute path p is dir or lies below it.
func contains(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}
