package protocol

import (
	"crypto/rand"
	"fmt"
)

// FrameworkID names a framework. The master assigns it on first subscribe.
type FrameworkID string

// AgentID names an agent. The master assigns it on registration.
type AgentID string

// OfferID names one resource offer. The master assigns it.
type OfferID string

// TaskID names a task. The framework chooses it; it is unique within its
// framework only, so a task is identified by (FrameworkID, TaskID).
type TaskID string

// StatusUUID names one status update; acknowledgements refer to it.
type StatusUUID string

// ID prefixes used by NewID for the IDs the cluster generates.
const (
	PrefixFramework = "fw"
	PrefixAgent     = "ag"
	PrefixOffer     = "of"
	PrefixStatus    = "st"
)

// MaxIDLen is the longest ID ValidID accepts, in bytes.
const MaxIDLen = 128

// NewID returns prefix + "-" + 26 random base32 characters (at least 128
// bits from crypto/rand), e.g. "fw-2N6XBQ4WL3HZ7QJ5KMRT4XY3AB". With an empty
// prefix it returns only the random part. The result is a valid ID and safe
// in a NATS subject when prefix is.
func NewID(prefix string) string {
	if prefix == "" {
		return rand.Text()
	}
	return prefix + "-" + rand.Text()
}

// NewFrameworkID returns a fresh framework ID.
func NewFrameworkID() FrameworkID { return FrameworkID(NewID(PrefixFramework)) }

// NewAgentID returns a fresh agent ID.
func NewAgentID() AgentID { return AgentID(NewID(PrefixAgent)) }

// NewOfferID returns a fresh offer ID.
func NewOfferID() OfferID { return OfferID(NewID(PrefixOffer)) }

// NewStatusUUID returns a fresh status update UUID.
func NewStatusUUID() StatusUUID { return StatusUUID(NewID(PrefixStatus)) }

// ValidID reports whether s may be used as an ID: non-empty, at most
// MaxIDLen bytes, and made only of ASCII letters, digits and ". _ : -".
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkID returns an ErrInvalidArgument error naming field unless ValidID(s).
func checkID[T ~string](field string, s T) error {
	if !ValidID(string(s)) {
		return Errorf(ErrInvalidArgument, "%s %q is not a valid id", field, truncate(string(s)))
	}
	return nil
}

// checkOptionalID is checkID that also accepts the empty string.
func checkOptionalID[T ~string](field string, s T) error {
	if s == "" {
		return nil
	}
	return checkID(field, s)
}

// truncate shortens s for use in error messages.
func truncate(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:n], len(s))
}
