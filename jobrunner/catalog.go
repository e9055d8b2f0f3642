package jobrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// The store's layout is package jobs' (jobs.SpecKey, ...), and
//
//	runner/framework/<role> the framework ID the runner uses for the role
//	runner/lease            the active runner's lease

func frameworkKey(role string) string { return "runner/framework/" + role }

// Submitted is what Submit did.
type Submitted struct {
	Job     *jobs.Job
	Version int
	// Unchanged: the file equals the version already running.
	Unchanged bool
}

// Submit parses a job file and makes it the job's next version. A file
// equal to the running version changes nothing.
func Submit(ctx context.Context, s *framework.Store, file string, src []byte, now time.Time) (Submitted, error) {
	job, err := jobs.Parse(file, src)
	if err != nil {
		return Submitted{}, err
	}
	for {
		spec, rev, err := readSpec(ctx, s, job.Name)
		if err != nil {
			return Submitted{}, err
		}
		if spec.Version > 0 && !spec.Stopped {
			if cur, ok, err := s.Get(ctx, jobs.VersionKey(job.Name, spec.Version)); err != nil {
				return Submitted{}, err
			} else if ok && string(cur.Value) == string(src) {
				return Submitted{Job: job, Version: spec.Version, Unchanged: true}, nil
			}
		}
		next := 1
		if len(spec.Versions) > 0 {
			next = slices.Max(spec.Versions) + 1
		}
		if _, err := s.Put(ctx, jobs.VersionKey(job.Name, next), src); err != nil {
			return Submitted{}, err
		}
		old := spec.Versions
		spec.Versions = append(spec.Versions, next)
		spec.Version, spec.Stopped, spec.Revert, spec.UpdatedAt = next, false, false, now
		var dropped []int
		if n := len(spec.Versions); n > jobs.KeepVersions {
			dropped, spec.Versions = spec.Versions[:n-jobs.KeepVersions], spec.Versions[n-jobs.KeepVersions:]
		}
		if err := writeSpec(ctx, s, job.Name, spec, rev); errors.Is(err, protocol.ErrConflict) {
			_, _ = s.Delete(ctx, jobs.VersionKey(job.Name, next), 0)
			spec.Versions = old
			continue // someone else wrote the spec: read it again
		} else if err != nil {
			return Submitted{}, err
		}
		for _, v := range dropped {
			_, _ = s.Delete(ctx, jobs.VersionKey(job.Name, v), 0)
		}
		return Submitted{Job: job, Version: next}, nil
	}
}

// Stop marks a job stopped: the runner kills its instances.
func Stop(ctx context.Context, s *framework.Store, name string, now time.Time) error {
	for {
		spec, rev, err := readSpec(ctx, s, name)
		if err != nil {
			return err
		}
		if rev == 0 {
			return fmt.Errorf("%w: no job %q", protocol.ErrInvalidArgument, name)
		}
		spec.Stopped, spec.UpdatedAt = true, now
		if err := writeSpec(ctx, s, name, spec, rev); !errors.Is(err, protocol.ErrConflict) {
			return err
		}
	}
}

// readSpec returns a job's spec record and its revision (0: no job).
func readSpec(ctx context.Context, s *framework.Store, name string) (jobs.SpecRecord, uint64, error) {
	var spec jobs.SpecRecord
	item, ok, err := s.Get(ctx, jobs.SpecKey(name))
	if err != nil || !ok {
		return spec, 0, err
	}
	if err := json.Unmarshal(item.Value, &spec); err != nil {
		return spec, 0, fmt.Errorf("job %q: spec record: %w", name, err)
	}
	return spec, item.Revision, nil
}

// writeSpec writes a spec record: created when rev is 0, else only over
// revision rev.
func writeSpec(ctx context.Context, s *framework.Store, name string, spec jobs.SpecRecord, rev uint64) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if rev == 0 {
		_, err = s.Create(ctx, jobs.SpecKey(name), data)
	} else {
		_, err = s.Update(ctx, jobs.SpecKey(name), data, rev)
	}
	if err == nil {
		// Its new revision tells the runner to read the specs again.
		_, err = s.Put(ctx, changedKey, []byte(name))
	}
	return err
}

// changedKey is written after every change of a spec, so the runner
// reads every spec again only when its revision moved.
const changedKey = "runner/changed"

// JobView is a job as `allot jobs status` shows it.
type JobView struct {
	Name      string
	Spec      jobs.SpecRecord
	Status    jobs.StatusRecord
	Instances []jobs.LiveInstance
}

// Read returns what the store holds of a job.
func Read(ctx context.Context, s *framework.Store, name string) (JobView, bool, error) {
	v := JobView{Name: name}
	spec, rev, err := readSpec(ctx, s, name)
	if err != nil || rev == 0 {
		return v, false, err
	}
	v.Spec = spec
	if item, ok, err := s.Get(ctx, jobs.StatusKey(name)); err != nil {
		return v, true, err
	} else if ok {
		_ = json.Unmarshal(item.Value, &v.Status)
	}
	if item, ok, err := s.Get(ctx, jobs.LiveKey(name)); err != nil {
		return v, true, err
	} else if ok {
		var live jobs.LiveRecord
		_ = json.Unmarshal(item.Value, &live)
		v.Instances = live.Instances
	}
	return v, true, nil
}

// Names lists the jobs in the store.
func Names(ctx context.Context, s *framework.Store) ([]string, error) {
	items, err := s.List(ctx, jobs.KeyPrefix)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, it := range items {
		if name, ok := jobs.NameOfSpecKey(it.Key); ok {
			names = append(names, name)
		}
	}
	return names, nil
}

// State is the job's state as the runner last recorded it.
func (v JobView) State() string { return jobs.Shown(v.Spec, v.Status) }

// Counts sums the instances by state, e.g. "3 running".
func (v JobView) Counts() string {
	n := map[jobs.InstanceState]int{}
	for _, in := range v.Instances {
		n[in.State]++
	}
	var parts []string
	for _, st := range []jobs.InstanceState{jobs.InstanceRunning, jobs.InstanceStarting, jobs.InstanceFinished, jobs.InstanceFailed} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Revert makes a kept version's job file the job's next version.
func Revert(ctx context.Context, s *framework.Store, name string, version int, now time.Time) (Submitted, error) {
	item, ok, err := s.Get(ctx, jobs.VersionKey(name, version))
	if err != nil {
		return Submitted{}, err
	}
	if !ok {
		return Submitted{}, fmt.Errorf("%w: job %q keeps no version %d", protocol.ErrInvalidArgument, name, version)
	}
	return Submit(ctx, s, fmt.Sprintf("%s v%d", name, version), item.Value, now)
}

// Source returns a kept version's job file.
func Source(ctx context.Context, s *framework.Store, name string, version int) ([]byte, bool, error) {
	item, ok, err := s.Get(ctx, jobs.VersionKey(name, version))
	return item.Value, ok, err
}
