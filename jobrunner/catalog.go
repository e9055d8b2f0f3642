package jobrunner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/jobs"
)

// The store's layout is package jobs' (jobs.SpecKey, ...), and
//
//	runner/framework/<role> the framework ID the runner uses for the role
//	runner/lease            the active runner's lease

func frameworkKey(role string) string { return "runner/framework/" + role }

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
	spec, rev, err := jobs.ReadSpec(ctx, s, name)
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

// Source returns a kept version's job file.
func Source(ctx context.Context, s *framework.Store, name string, version int) ([]byte, bool, error) {
	item, ok, err := s.Get(ctx, jobs.VersionKey(name, version))
	return item.Value, ok, err
}
