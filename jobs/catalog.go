package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Store is a principal's store at the masters as the catalog uses it:
// the SDK's store (through NATS) and the masters' HTTP API (through their
// own state) both are one.
type Store interface {
	Get(ctx context.Context, key string) (protocol.StoreItem, bool, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)
	Delete(ctx context.Context, key string, rev uint64) (bool, error)
}

// ChangedKey is written after every change of a spec, so the runner
// reads every spec again only when its revision moved.
const ChangedKey = "runner/changed"

// Submitted is what Submit did.
type Submitted struct {
	Job     *Job
	Version int
	// Unchanged: the file equals the version already running.
	Unchanged bool
	// Changes is what the new version starts, stops and replaces of the
	// version that ran before it.
	Changes []GroupChange
}

// Submit parses a job file and makes it the job's next version. A file
// equal to the running version changes nothing.
func Submit(ctx context.Context, s Store, file string, src []byte, now time.Time) (Submitted, error) {
	job, err := Parse(file, src)
	if err != nil {
		return Submitted{}, err
	}
	for {
		cur, err := readCurrent(ctx, s, job.Name, src)
		if err != nil {
			return Submitted{}, err
		}
		if cur.same {
			return Submitted{Job: job, Version: cur.spec.Version, Unchanged: true}, nil
		}
		next, err := addVersion(ctx, s, job.Name, cur, src, false, now)
		if errors.Is(err, protocol.ErrConflict) {
			continue // someone else wrote the spec: read it again
		}
		if err != nil {
			return Submitted{}, err
		}
		return Submitted{Job: job, Version: next, Changes: Changes(cur.running, job)}, nil
	}
}

// AutoRevert makes version to's file the job's next version, marked as a
// failed update's revert (the runner's, with auto_revert).
func AutoRevert(ctx context.Context, s Store, name string, to int, now time.Time) (int, error) {
	src, err := keptVersion(ctx, s, name, to)
	if err != nil {
		return 0, err
	}
	for {
		cur, err := readCurrent(ctx, s, name, src)
		if err != nil {
			return 0, err
		}
		if cur.rev == 0 {
			return 0, fmt.Errorf("%w: no job %q", protocol.ErrInvalidArgument, name)
		}
		next, err := addVersion(ctx, s, name, cur, src, true, now)
		if !errors.Is(err, protocol.ErrConflict) {
			return next, err
		}
	}
}

// addVersion makes src the job's next version over the spec cur read.
// The version's number is claimed by creating its key, so two writers at
// once never share one (a number another claimed is passed over); the
// spec is written only over the revision cur read, and when it moved
// meanwhile the claim is given back and the error is ErrConflict.
func addVersion(ctx context.Context, s Store, name string, cur current, src []byte, revert bool, now time.Time) (int, error) {
	next := nextVersion(cur.spec)
	var claimed uint64
	for {
		rev, err := s.Create(ctx, VersionKey(name, next), src)
		if err == nil {
			claimed = rev
			break
		}
		if !errors.Is(err, protocol.ErrConflict) {
			return 0, err
		}
		next++
	}
	spec := cur.spec
	spec.Versions = append(slices.Clone(spec.Versions), next)
	spec.Version, spec.Stopped, spec.Revert, spec.UpdatedAt = next, false, revert, now
	var dropped []int
	if n := len(spec.Versions); n > KeepVersions {
		dropped, spec.Versions = spec.Versions[:n-KeepVersions], spec.Versions[n-KeepVersions:]
	}
	if err := WriteSpec(ctx, s, name, spec, cur.rev); err != nil {
		if errors.Is(err, protocol.ErrConflict) {
			_, _ = s.Delete(ctx, VersionKey(name, next), claimed)
		}
		return 0, err
	}
	for _, v := range dropped {
		_, _ = s.Delete(ctx, VersionKey(name, v), 0)
	}
	return next, nil
}

// Preview is what Submit would do, changing nothing: the version it
// would make and what that starts, stops and replaces.
func Preview(ctx context.Context, s Store, file string, src []byte) (Submitted, error) {
	job, err := Parse(file, src)
	if err != nil {
		return Submitted{}, err
	}
	cur, err := readCurrent(ctx, s, job.Name, src)
	if err != nil {
		return Submitted{}, err
	}
	if cur.same {
		return Submitted{Job: job, Version: cur.spec.Version, Unchanged: true}, nil
	}
	return Submitted{Job: job, Version: nextVersion(cur.spec), Changes: Changes(cur.running, job)}, nil
}

// current is a job as the store holds it before a submission.
type current struct {
	spec SpecRecord
	rev  uint64
	// running is the version that runs (nil: none, or the job stopped);
	// same, whether its file is the one submitted.
	running *Job
	same    bool
}

func readCurrent(ctx context.Context, s Store, name string, src []byte) (current, error) {
	var c current
	var err error
	if c.spec, c.rev, err = ReadSpec(ctx, s, name); err != nil || c.spec.Version == 0 || c.spec.Stopped {
		return c, err
	}
	item, ok, err := s.Get(ctx, VersionKey(name, c.spec.Version))
	if err != nil || !ok {
		return c, err
	}
	c.same = string(item.Value) == string(src)
	c.running, _ = Parse(name, item.Value)
	return c, nil
}

func nextVersion(spec SpecRecord) int {
	if len(spec.Versions) == 0 {
		return 1
	}
	return slices.Max(spec.Versions) + 1
}

// Stop marks a job stopped: the runner kills its instances.
func Stop(ctx context.Context, s Store, name string, now time.Time) error {
	for {
		spec, rev, err := ReadSpec(ctx, s, name)
		if err != nil {
			return err
		}
		if rev == 0 {
			return fmt.Errorf("%w: no job %q", protocol.ErrInvalidArgument, name)
		}
		spec.Stopped, spec.UpdatedAt = true, now
		if err := WriteSpec(ctx, s, name, spec, rev); !errors.Is(err, protocol.ErrConflict) {
			return err
		}
	}
}

// Revert makes a kept version's job file the job's next version.
func Revert(ctx context.Context, s Store, name string, version int, now time.Time) (Submitted, error) {
	src, err := keptVersion(ctx, s, name, version)
	if err != nil {
		return Submitted{}, err
	}
	return Submit(ctx, s, fmt.Sprintf("%s v%d", name, version), src, now)
}

// keptVersion is a kept version's job file.
func keptVersion(ctx context.Context, s Store, name string, version int) ([]byte, error) {
	item, ok, err := s.Get(ctx, VersionKey(name, version))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: job %q keeps no version %d", protocol.ErrInvalidArgument, name, version)
	}
	return item.Value, nil
}

// ReadSpec returns a job's spec record and its revision (0: no job).
func ReadSpec(ctx context.Context, s Store, name string) (SpecRecord, uint64, error) {
	var spec SpecRecord
	item, ok, err := s.Get(ctx, SpecKey(name))
	if err != nil || !ok {
		return spec, 0, err
	}
	if err := json.Unmarshal(item.Value, &spec); err != nil {
		return spec, 0, fmt.Errorf("job %q: spec record: %w", name, err)
	}
	return spec, item.Revision, nil
}

// WriteSpec writes a spec record: created when rev is 0, else only over
// revision rev; then marks the change for the runner.
func WriteSpec(ctx context.Context, s Store, name string, spec SpecRecord, rev uint64) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = s.Create(ctx, SpecKey(name), data)
	} else {
		_, err = s.Update(ctx, SpecKey(name), data, rev)
	}
	if err == nil {
		_, err = s.Put(ctx, ChangedKey, []byte(name))
	}
	return err
}
