package protocol

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// OfferKind says which allocation path produced an offer, and so a task
// launched on it: the fair (H-DRF) share or the leftover pool.
type OfferKind string

// Offer kinds.
const (
	OfferFair     OfferKind = "fair"
	OfferLeftover OfferKind = "leftover"
)

// Valid reports whether k is a known kind.
func (k OfferKind) Valid() bool { return k == OfferFair || k == OfferLeftover }

// URI is a file the agent fetches into the task's sandbox before launch.
type URI struct {
	// Value is the URL (http, https or file) to fetch.
	Value string `msgpack:"v" json:"value"`
	// Sha256 is the expected hex digest; empty skips the check.
	Sha256 string `msgpack:"sha256,omitempty" json:"sha256,omitempty"`
	// Executable marks the fetched file executable.
	Executable bool `msgpack:"x,omitempty" json:"executable,omitempty"`
	// Extract unpacks a recognised archive into the sandbox.
	Extract bool `msgpack:"extract,omitempty" json:"extract,omitempty"`
	// OutputFile is the sandbox-relative name to save as; empty uses the
	// URL's base name.
	OutputFile string `msgpack:"out,omitempty" json:"output_file,omitempty"`
}

// Validate checks the URI's fields, rejecting output paths that leave the sandbox.
func (u URI) Validate() error {
	if err := checkRequired("uri", u.Value, MaxTextLen); err != nil {
		return err
	}
	if u.Sha256 != "" && !isHex(u.Sha256, 64) {
		return Errorf(ErrInvalidArgument, "uri sha256 %q is not 64 hex digits", truncate(u.Sha256))
	}
	if u.OutputFile != "" {
		clean := path.Clean(u.OutputFile)
		if path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") ||
			strings.ContainsRune(u.OutputFile, 0) || len(u.OutputFile) > MaxNameLen {
			return Errorf(ErrInvalidArgument, "uri output file %q escapes the sandbox", truncate(u.OutputFile))
		}
	}
	return nil
}

// CommandInfo says what a task runs. With Shell, Value is a command line run
// by /bin/sh -c and Args is ignored; otherwise Value is the executable and
// Args are the arguments after it.
type CommandInfo struct {
	Shell bool              `msgpack:"sh,omitempty" json:"shell,omitempty"`
	Value string            `msgpack:"v" json:"value"`
	Args  []string          `msgpack:"args,omitempty" json:"args,omitempty"`
	Env   map[string]string `msgpack:"env,omitempty" json:"env,omitempty"`
	URIs  []URI             `msgpack:"uris,omitempty" json:"uris,omitempty"`
	// User runs the task as this user; empty means the agent's default.
	User string `msgpack:"user,omitempty" json:"user,omitempty"`
}

// Validate checks the command's fields and sizes.
func (c CommandInfo) Validate() error {
	if err := checkRequired("command", c.Value, MaxTextLen); err != nil {
		return err
	}
	if strings.ContainsRune(c.Value, 0) {
		return Errorf(ErrInvalidArgument, "command contains NUL")
	}
	if err := checkLen("command args", len(c.Args), MaxMapLen); err != nil {
		return err
	}
	for i, a := range c.Args {
		if len(a) > MaxTextLen || strings.ContainsRune(a, 0) {
			return Errorf(ErrInvalidArgument, "command arg %d is too long or contains NUL", i)
		}
	}
	if err := checkStringMap("command env", c.Env); err != nil {
		return err
	}
	for k, v := range c.Env {
		if strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return Errorf(ErrInvalidArgument, "command env %q contains '=' or NUL", truncate(k))
		}
	}
	if err := checkLen("command uris", len(c.URIs), MaxMapLen); err != nil {
		return err
	}
	for i, u := range c.URIs {
		if err := u.Validate(); err != nil {
			return fmt.Errorf("command uris[%d]: %w", i, err)
		}
	}
	return checkUser("command user", c.User)
}

// TaskInfo describes a task a framework launches on an accepted offer.
type TaskInfo struct {
	// TaskID is chosen by the framework, unique within it.
	TaskID TaskID `msgpack:"tid" json:"task_id"`
	// Name is for humans; it need not be unique.
	Name    string  `msgpack:"name,omitempty" json:"name,omitempty"`
	AgentID AgentID `msgpack:"ag" json:"agent_id"`
	// Resources are what the task uses, taken from the accepted offers.
	Resources Resources   `msgpack:"res" json:"resources"`
	Command   CommandInfo `msgpack:"cmd" json:"command"`
	// Constraints are re-checked by the agent: a hard one its attributes
	// fail makes the task ERROR with ReasonConstraintViolated.
	Constraints []Constraint `msgpack:"cons,omitempty" json:"constraints,omitempty"`
	// Kind is the kind of the offer the task was launched on; the master
	// sets it, whatever the framework sent.
	Kind   OfferKind         `msgpack:"kind,omitempty" json:"kind,omitempty"`
	Labels map[string]string `msgpack:"labels,omitempty" json:"labels,omitempty"`
	// KillGracePeriod is how long a kill waits between SIGTERM and SIGKILL;
	// 0 means the agent's default. Nanoseconds on the wire.
	KillGracePeriod time.Duration `msgpack:"grace,omitempty" json:"kill_grace_period,omitempty"`
	// GroupID names the task group (launch_group) the task belongs to.
	GroupID string `msgpack:"gid,omitempty" json:"group_id,omitempty"`
	// HealthCheck, when set, is run by the agent while the task runs.
	HealthCheck *HealthCheck `msgpack:"health,omitempty" json:"health_check,omitempty"`
	// NonPreemptible asks that the master never preempt the task. The
	// master accepts it only for a task on a fair offer whose role's
	// guarantee covers it with the role's other non-preemptible tasks
	// (docs/preemption.md).
	NonPreemptible bool `msgpack:"nonpre,omitempty" json:"non_preemptible,omitempty"`
}

// Validate checks the task's IDs, resources (which must not be empty),
// command, constraints, labels and sizes.
func (t TaskInfo) Validate() error {
	if err := checkID("task_id", t.TaskID); err != nil {
		return err
	}
	if err := t.validate(); err != nil {
		return fmt.Errorf("task %s: %w", t.TaskID, err)
	}
	return nil
}

func (t TaskInfo) validate() error {
	if err := checkText("name", t.Name, MaxNameLen); err != nil {
		return err
	}
	if err := checkID("agent_id", t.AgentID); err != nil {
		return err
	}
	if err := checkResources("resources", t.Resources); err != nil {
		return err
	}
	if t.Resources.IsEmpty() {
		return Errorf(ErrInvalidResources, "task uses no resources")
	}
	if err := t.Command.Validate(); err != nil {
		return err
	}
	if err := checkConstraints("constraints", t.Constraints); err != nil {
		return err
	}
	if t.Kind != "" && !t.Kind.Valid() {
		return Errorf(ErrInvalidArgument, "unknown kind %q", truncate(string(t.Kind)))
	}
	if err := checkStringMap("labels", t.Labels); err != nil {
		return err
	}
	if err := checkNonNegative("kill_grace_period", t.KillGracePeriod); err != nil {
		return err
	}
	if t.HealthCheck != nil {
		if err := t.HealthCheck.Validate(); err != nil {
			return err
		}
	}
	return checkOptionalID("group_id", t.GroupID)
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
