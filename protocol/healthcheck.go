package protocol

import (
	"strings"
	"time"
)

// HealthCheck is how the agent checks that a running task is healthy, as
// Mesos's and Nomad's checks do: every Interval, after GracePeriod, it
// runs the check, reports the result in a RUNNING status update whenever it
// changes (TaskStatus.Healthy), and kills the task (KILLED, reason
// task_unhealthy) after ConsecutiveFailures failures in a row when that is
// set.
type HealthCheck struct {
	Type HealthCheckType `msgpack:"type" json:"type"`
	// Command is run with /bin/sh -c in the task's sandbox, with the task's
	// environment (type command); exit 0 is healthy.
	Command string `msgpack:"cmd,omitempty" json:"command,omitempty"`
	// Port is the port on the agent's loopback interface to check (types
	// http and tcp), usually one of the task's ports.
	Port int `msgpack:"port,omitempty" json:"port,omitempty"`
	// Path is the HTTP path (type http, default "/"); a 2xx or 3xx answer
	// is healthy.
	Path string `msgpack:"path,omitempty" json:"path,omitempty"`
	// Interval between checks (default 10 s) and Timeout of one (default
	// 5 s). Nanoseconds on the wire.
	Interval time.Duration `msgpack:"every,omitempty" json:"interval,omitempty"`
	Timeout  time.Duration `msgpack:"timeout,omitempty" json:"timeout,omitempty"`
	// GracePeriod after the task starts during which failures do not
	// count (successes do).
	GracePeriod time.Duration `msgpack:"grace,omitempty" json:"grace_period,omitempty"`
	// ConsecutiveFailures kills the task after that many failures in a
	// row; 0 only reports.
	ConsecutiveFailures int `msgpack:"fails,omitempty" json:"consecutive_failures,omitempty"`
}

// HealthCheckType says how a HealthCheck checks.
type HealthCheckType string

// The kinds of health check.
const (
	HealthCheckCommand HealthCheckType = "command"
	HealthCheckHTTP    HealthCheckType = "http"
	HealthCheckTCP     HealthCheckType = "tcp"
)

// Defaults of a HealthCheck's timing.
const (
	DefaultHealthInterval = 10 * time.Second
	DefaultHealthTimeout  = 5 * time.Second
	// MinHealthInterval keeps checks from loading the agent.
	MinHealthInterval = 100 * time.Millisecond
)

// ReasonTaskUnhealthy: the agent killed the task after its health check
// failed HealthCheck.ConsecutiveFailures times in a row.
const ReasonTaskUnhealthy = "task_unhealthy"

// WithDefaults returns the check with its zero timings set to the defaults.
func (h HealthCheck) WithDefaults() HealthCheck {
	if h.Interval == 0 {
		h.Interval = DefaultHealthInterval
	}
	if h.Timeout == 0 {
		h.Timeout = DefaultHealthTimeout
	}
	if h.Type == HealthCheckHTTP && h.Path == "" {
		h.Path = "/"
	}
	return h
}

// Validate checks the type and the fields it needs.
func (h HealthCheck) Validate() error {
	switch h.Type {
	case HealthCheckCommand:
		if err := checkRequired("health_check.command", h.Command, MaxTextLen); err != nil {
			return err
		}
	case HealthCheckHTTP, HealthCheckTCP:
		if h.Port < 1 || h.Port > 65535 {
			return Errorf(ErrInvalidArgument, "health_check.port %d: want 1 to 65535", h.Port)
		}
		if err := checkText("health_check.path", h.Path, MaxNameLen); err != nil {
			return err
		}
		if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
			return Errorf(ErrInvalidArgument, "health_check.path %q: want an absolute path", truncate(h.Path))
		}
	default:
		return Errorf(ErrInvalidArgument, "health_check.type %q: want command, http or tcp", truncate(string(h.Type)))
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"interval", h.Interval}, {"timeout", h.Timeout}, {"grace_period", h.GracePeriod}} {
		if err := checkNonNegative("health_check."+d.field, d.v); err != nil {
			return err
		}
	}
	if h.Interval != 0 && h.Interval < MinHealthInterval {
		return Errorf(ErrInvalidArgument, "health_check.interval %v: at least %v", h.Interval, MinHealthInterval)
	}
	return checkNonNegative("health_check.consecutive_failures", h.ConsecutiveFailures)
}
