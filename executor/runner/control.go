package runner

import (
	"os"
	"path/filepath"
)

// A task's control directory holds what the agent and the shim tell each
// other (spec.json, shim.json, kill.json, exit.json, shim.log). It is
// ControlDir/<name>, outside the sandbox: a task owns its sandbox and could
// rename, replace or symlink anything in it, making the shim (root) write
// elsewhere or the agent read forged records. Its path follows from the
// sandbox name alone, which the agent checkpoints, so a restarted agent
// finds it again.
//
// Earlier versions kept it in the sandbox, as <sandbox>/.allot; tasks they
// started are still found there (legacyControl). That name stays reserved:
// fetched files and archive entries may not be written there, and Prepare
// stages its downloads there while the sandbox is still the agent's.
const legacyControlDir = ".allot"

// controlOf returns the control directory of the sandbox name.
func (r *Runner) controlOf(name string) string { return filepath.Join(r.controlDir, name) }

// control returns the path of a file in the control directory ctl.
func control(ctl, name string) string { return filepath.Join(ctl, name) }

// findControl returns the control directory of the task in sandbox name:
// ControlDir/name, or the legacy one in the sandbox for a task an earlier
// version started there.
func (r *Runner) findControl(name, sandbox string) string {
	ctl := r.controlOf(name)
	if _, err := os.Lstat(control(ctl, specFile)); !notExist(err) {
		return ctl
	}
	if legacy := filepath.Join(sandbox, legacyControlDir); legacyControl(sandbox, legacy) {
		return legacy
	}
	return ctl
}

// legacyControl reports whether dir is the control directory an earlier
// version made in sandbox: the sandbox and dir are directories, not
// symlinks, and both belong to the agent's user. Tasks of those versions
// ran as that user. A sandbox that belongs to a task's user holds nothing
// the agent may trust, whatever its names.
func legacyControl(sandbox, dir string) bool {
	for _, p := range []string{sandbox, dir} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return false
		}
		if owner, err := ownerOf(p); err != nil || int(owner) != os.Geteuid() {
			return false
		}
	}
	_, err := os.Lstat(control(dir, specFile))
	return err == nil
}

// shimControl returns the control directory a shim was started with, arg:
// the directory itself, or a sandbox holding a legacy one when an agent of
// an earlier version started the shim (it passed the sandbox).
func shimControl(arg string) string {
	if _, err := os.Lstat(control(arg, specFile)); notExist(err) {
		if legacy := filepath.Join(arg, legacyControlDir); legacyControl(arg, legacy) {
			return legacy
		}
	}
	return arg
}
