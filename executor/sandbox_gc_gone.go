package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// The frameworks the agent was told to shut down, which may lose their
// ended sandboxes before the delay when the disk is short. They are kept
// in WorkDir/frameworks_gone.json, so that a restarted agent still knows
// them: without it, their sandboxes would count as live frameworks' until
// their delay. The file is rewritten (atomically) only when a framework
// is added or returns, which is rare.
const goneFile = "frameworks_gone.json"

// maxGone bounds the frameworks remembered; the ones shut down longest ago
// are forgotten first. Beyond twice the delay after its shutdown a
// framework's sandboxes are all past their delay anyway, so it is
// forgotten then too.
const maxGone = 4096

// goneRecord is the file's content.
type goneRecord struct {
	// Frameworks maps each framework to when the agent was told it is gone.
	Frameworks map[protocol.FrameworkID]time.Time `json:"frameworks"`
}

// loadGone reads the file; a missing one is an empty set.
func loadGone(path string) (map[protocol.FrameworkID]time.Time, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[protocol.FrameworkID]time.Time{}, nil
	}
	var rec goneRecord
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil {
		return map[protocol.FrameworkID]time.Time{}, fmt.Errorf("%w: %s: %w", ErrCheckpoint, goneFile, err)
	}
	out := map[protocol.FrameworkID]time.Time{}
	for fw, at := range rec.Frameworks {
		if protocol.ValidID(string(fw)) {
			out[fw] = at
		}
	}
	return out, nil
}

// saveGone writes the set durably.
func saveGone(path string, gone map[protocol.FrameworkID]time.Time) error {
	data, err := json.Marshal(goneRecord{Frameworks: gone})
	if err == nil {
		err = writeFileAtomic(path, append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCheckpoint, goneFile, err)
	}
	return nil
}

// pruneGone forgets the frameworks shut down more than keep ago, then the
// oldest beyond maxGone.
func pruneGone(gone map[protocol.FrameworkID]time.Time, now time.Time, keep time.Duration) {
	maps.DeleteFunc(gone, func(_ protocol.FrameworkID, at time.Time) bool { return now.Sub(at) > keep })
	if len(gone) <= maxGone {
		return
	}
	ids := slices.SortedFunc(maps.Keys(gone), func(a, b protocol.FrameworkID) int { return gone[a].Compare(gone[b]) })
	for _, fw := range ids[:len(ids)-maxGone] {
		delete(gone, fw)
	}
}
