package protocol

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Limits enforced by Validate on the messages the master and agents receive.
// They bound the work one request can cause; they are not resource quotas.
const (
	// MaxNameLen bounds names, principals, roles, hostnames, versions,
	// addresses, label and environment keys, capabilities and reasons.
	MaxNameLen = 256
	// MaxTextLen bounds free text: status messages, command lines, arguments,
	// environment and label values, URIs.
	MaxTextLen = 16 << 10
	// MaxTasksPerAccept bounds the tasks launched by one accept, summed over
	// its operations.
	MaxTasksPerAccept = 10_000
	// MaxOffersPerRequest bounds the offer IDs named in one accept or decline.
	MaxOffersPerRequest = 10_000
	// MaxListLen bounds other lists: reconcile tasks, demand shapes, flows,
	// task statuses and unacknowledged updates in a reregistration.
	MaxListLen = 100_000
	// MaxStatusBatch bounds the status updates of one StatusUpdateRequest
	// and the acknowledgements of one AcknowledgeRequest or AckCommand.
	MaxStatusBatch = 4096
	// MaxConstraints bounds the constraints on one task or task shape.
	MaxConstraints = 64
	// MaxMapLen bounds labels, environment variables, URIs, arguments and
	// capabilities on one message or task.
	MaxMapLen = 1024
	// MaxRefuseSeconds caps Filters.RefuseSeconds (365 days, as in Mesos).
	MaxRefuseSeconds = 365 * 24 * 60 * 60
)

// ValidRole reports whether role is a role path: one or more segments of
// ASCII letters, digits, '_', '-' and '.', separated by '/', at most
// MaxNameLen bytes, with no empty, "." or ".." segment (e.g. "eng/prod").
func ValidRole(role string) bool {
	if role == "" || len(role) > MaxNameLen {
		return false
	}
	for seg := range strings.SplitSeq(role, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			case c == '_', c == '-', c == '.':
			default:
				return false
			}
		}
	}
	return true
}

func checkText(field, s string, limit int) error {
	if len(s) > limit {
		return Errorf(ErrInvalidArgument, "%s is %d bytes, limit %d", field, len(s), limit)
	}
	return nil
}

func checkRequired(field, s string, limit int) error {
	if s == "" {
		return Errorf(ErrInvalidArgument, "%s is required", field)
	}
	return checkText(field, s, limit)
}

func checkLen(field string, n, limit int) error {
	if n > limit {
		return Errorf(ErrInvalidArgument, "%s has %d entries, limit %d", field, n, limit)
	}
	return nil
}

func checkNonNegative[T int | int64 | time.Duration](field string, v T) error {
	if v < 0 {
		return Errorf(ErrInvalidArgument, "%s is negative (%d)", field, int64(v))
	}
	return nil
}

func checkFloat(field string, f, limit float64) error {
	if math.IsNaN(f) || f < 0 || f > limit {
		return Errorf(ErrInvalidArgument, "%s is %v, want 0 to %v", field, f, limit)
	}
	return nil
}

func checkResources(field string, r Resources) error {
	if err := checkLen(field+" scalars", len(r.Scalars), MaxMapLen); err != nil {
		return err
	}
	if err := checkLen(field+" ranges", len(r.Ranges), MaxMapLen); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

func checkConstraints(field string, cs []Constraint) error {
	if err := checkLen(field, len(cs), MaxConstraints); err != nil {
		return err
	}
	for i, c := range cs {
		if len(c.Attribute) > MaxNameLen || len(c.Value) > MaxTextLen || len(c.Values) > MaxMapLen {
			return Errorf(ErrInvalidConstraint, "%s[%d] too long", field, i)
		}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%s[%d]: %w", field, i, err)
		}
	}
	return nil
}

func checkAttributes(field string, a Attributes) error {
	if err := checkLen(field, len(a), MaxMapLen); err != nil {
		return err
	}
	for k, v := range a {
		if err := checkRequired(field+" key", k, MaxNameLen); err != nil {
			return err
		}
		if v.Kind > KindSet {
			return Errorf(ErrInvalidArgument, "%s %q has unknown kind %d", field, k, v.Kind)
		}
		if len(v.Text) > MaxTextLen || len(v.Set) > MaxMapLen {
			return Errorf(ErrInvalidArgument, "%s %q too long", field, k)
		}
	}
	return nil
}

func checkStringMap(field string, m map[string]string) error {
	if err := checkLen(field, len(m), MaxMapLen); err != nil {
		return err
	}
	for k, v := range m {
		if err := checkRequired(field+" key", k, MaxNameLen); err != nil {
			return err
		}
		if err := checkText(field+" "+truncate(k), v, MaxTextLen); err != nil {
			return err
		}
	}
	return nil
}

// MaxUserLen bounds a Unix user name.
const MaxUserLen = 32

// checkUser accepts an empty user or a portable Unix user name: letters,
// digits, '.', '_' and '-', not starting with '-', at most MaxUserLen bytes.
func checkUser(field, u string) error {
	if u == "" {
		return nil
	}
	if len(u) > MaxUserLen || u[0] == '-' {
		return Errorf(ErrInvalidArgument, "%s %q is not a user name", field, truncate(u))
	}
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return Errorf(ErrInvalidArgument, "%s %q is not a user name", field, truncate(u))
		}
	}
	return nil
}
