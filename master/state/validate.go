package state

import (
	"fmt"
	"math"

	"github.com/allot-project/allot/protocol"
)

// maxWeight bounds role and framework weights.
const maxWeight = 1e6

// errorf wraps a protocol sentinel with context; see protocol.Errorf.
func errorf(sentinel *protocol.Error, format string, args ...any) error {
	return protocol.Errorf(sentinel, format, args...)
}

// checkTime requires a leader-stamped time: positive Unix nanoseconds.
func checkTime(field string, t int64) error {
	if t <= 0 {
		return errorf(protocol.ErrInvalidArgument, "%s %d is not a timestamp", field, t)
	}
	return nil
}

// checkID requires a valid ID.
func checkID[T ~string](field string, id T) error {
	if !protocol.ValidID(string(id)) {
		return errorf(protocol.ErrInvalidArgument, "%s %q is not a valid id", field, clip(string(id)))
	}
	return nil
}

// checkWeight requires a finite weight in (0, maxWeight].
func checkWeight(field string, w float64) error {
	if math.IsNaN(w) || w <= 0 || w > maxWeight {
		return errorf(protocol.ErrInvalidArgument, "%s %v is not in (0, %v]", field, w, maxWeight)
	}
	return nil
}

// checkResources requires well-formed resources.
func checkResources(field string, r protocol.Resources) error {
	if len(r.Scalars) > protocol.MaxMapLen || len(r.Ranges) > protocol.MaxMapLen {
		return errorf(protocol.ErrInvalidArgument, "%s has too many entries", field)
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// clip shortens s for use in error messages.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
