package master

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// The job runners' jobs, read from their principals' stores, where the
// runners record them (docs/jobs.md): a principal sees its own, the
// operator every principal's.
//
//	GET /v1/jobs                     every job the reader may see
//	GET /v1/jobs/{principal}/{name}  one, with its job file
//	GET /ui/jobs, GET /ui/jobs/{principal}/{name}

func (m *Master) serveJobs(w http.ResponseWriter, _ *http.Request, v viewer) {
	writeJSON(w, http.StatusOK, m.jobsFor(v))
}

func (m *Master) serveJob(w http.ResponseWriter, r *http.Request, v viewer) {
	j, ok := m.jobFor(v, r.PathValue("principal"), r.PathValue("name"))
	if !ok {
		writeJSON(w, http.StatusNotFound, api.Error{Error: "unknown job " + r.PathValue("name")})
		return
	}
	writeJSON(w, http.StatusOK, j)
}

// jobsFor lists the jobs v may see.
func (m *Master) jobsFor(v viewer) []api.Job {
	view := m.View()
	out := []api.Job{}
	for _, p := range view.StorePrincipals() {
		if !v.sees(p) {
			continue
		}
		after := ""
		for {
			entries, more := view.StoreList(p, jobs.KeyPrefix, after, 1000)
			for _, e := range entries {
				if name, ok := jobs.NameOfSpecKey(e.Key); ok {
					out = append(out, readJob(view, p, name, false))
				}
			}
			if !more || len(entries) == 0 {
				break
			}
			after = entries[len(entries)-1].Key
		}
	}
	return out
}

// jobFor is one job v may see; principalToken is the principal as in
// subjects (the anonymous one has a token).
func (m *Master) jobFor(v viewer, principalToken, name string) (api.Job, bool) {
	p := recordedPrincipal(principalToken)
	if !v.sees(p) {
		return api.Job{}, false
	}
	view := m.View()
	if _, ok := view.StoreGet(p, jobs.SpecKey(name)); !ok {
		return api.Job{}, false
	}
	return readJob(view, p, name, true), true
}

// readJob puts together what the store holds of a job.
func readJob(view *state.View, principal, name string, source bool) api.Job {
	j := api.Job{Principal: principal, Name: name, Versions: []int{}, Instances: []api.JobInstance{}}
	var spec jobs.SpecRecord
	if e, ok := view.StoreGet(principal, jobs.SpecKey(name)); ok && json.Unmarshal(e.Value, &spec) == nil {
		j.Version, j.Versions, j.Parent = spec.Version, spec.Versions, spec.Parent
	}
	var status jobs.StatusRecord
	if e, ok := view.StoreGet(principal, jobs.StatusKey(name)); ok && json.Unmarshal(e.Value, &status) == nil {
		j.Message, j.StableVersion = status.Message, status.StableVersion
	}
	j.State = jobs.Shown(spec, status)
	var live jobs.LiveRecord
	if e, ok := view.StoreGet(principal, jobs.LiveKey(name)); ok && json.Unmarshal(e.Value, &live) == nil {
		for _, in := range live.Instances {
			j.Instances = append(j.Instances, api.JobInstance{ID: in.ID, State: string(in.State), Healthy: in.Healthy,
				Agent: protocol.AgentID(in.Agent), Since: in.Since.UTC().Format(time.RFC3339), Message: in.Message})
		}
	}
	if source {
		v := spec.Version
		owner := name
		if spec.Parent != "" {
			owner, v = spec.Parent, spec.ParentVersion
		}
		if e, ok := view.StoreGet(principal, jobs.VersionKey(owner, v)); ok {
			j.Source = string(e.Value)
		}
	}
	return j
}
