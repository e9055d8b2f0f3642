package master

import (
	"errors"
	"mime"
	"net/http"
	"time"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// Changing the jobs over HTTP (leader only; followers redirect), as
// `allot jobs` does through the store, on behalf of the principal the
// path names: that principal itself or the operator (api/jobs.go).
//
//	POST /v1/jobs/{principal}                 api.JobSubmit: submit or check a job file
//	POST /v1/jobs/{principal}/{name}/stop     stop a job
//	POST /v1/jobs/{principal}/{name}/revert   api.JobRevert: a kept version's file as the next version
//
// Bodies must be JSON (Content-Type application/json), so that a page of
// another site cannot post one with a browser's stored credentials
// without the browser asking this master first.

// maxJobBody bounds a submission: a job file as large as a store value,
// escaped in JSON.
const maxJobBody = 2*protocol.MaxStoreValueSize + 4<<10

func (m *Master) serveSubmitJob(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	p, ok := m.jobsPrincipal(w, r, v)
	if !ok {
		return
	}
	var req api.JobSubmit
	if !decodeJobBody(w, r, maxJobBody, &req) {
		return
	}
	if req.File == "" {
		req.File = "job.hcl"
	}
	job, err := jobs.Parse(req.File, []byte(req.Source))
	if err == nil {
		err = checkJobFits(m.View(), job)
	}
	if err != nil {
		writeJobError(w, err)
		return
	}
	ctx, cancel := l.requestContext(r.Context())
	defer cancel()
	s := principalStore{l: l, principal: p}
	var sub jobs.Submitted
	if req.Check {
		sub, err = jobs.Preview(ctx, s, req.File, []byte(req.Source))
	} else {
		sub, err = jobs.Submit(ctx, s, req.File, []byte(req.Source), time.Now())
	}
	if err != nil {
		writeJobError(w, err)
		return
	}
	l.logger.Info("job submitted over http", "principal", p, "job", sub.Job.Name, "version", sub.Version,
		"unchanged", sub.Unchanged, "check", req.Check)
	writeJSON(w, http.StatusOK, jobChange(p, sub, req.Check))
}

func (m *Master) serveStopJob(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	p, ok := m.jobsPrincipal(w, r, v)
	if !ok || !decodeJobBody(w, r, maxActionBody, &struct{}{}) {
		return
	}
	name := r.PathValue("name")
	if _, known := m.View().StoreGet(p, jobs.SpecKey(name)); !known {
		writeError(w, http.StatusNotFound, protocol.Errorf(protocol.ErrInvalidArgument, "no job %q", clipText(name)))
		return
	}
	ctx, cancel := l.requestContext(r.Context())
	defer cancel()
	if err := jobs.Stop(ctx, principalStore{l: l, principal: p}, name, time.Now()); err != nil {
		writeJobError(w, err)
		return
	}
	l.logger.Info("job stopped over http", "principal", p, "job", name)
	writeJSON(w, http.StatusOK, api.JobChange{Principal: p, Name: name, Stopped: true, Groups: []api.JobGroupChange{}})
}

func (m *Master) serveRevertJob(w http.ResponseWriter, r *http.Request, l *leader, v viewer) {
	p, ok := m.jobsPrincipal(w, r, v)
	var req api.JobRevert
	if !ok || !decodeJobBody(w, r, maxActionBody, &req) {
		return
	}
	name := r.PathValue("name")
	if _, known := m.View().StoreGet(p, jobs.VersionKey(name, req.Version)); !known || req.Version < 1 {
		writeError(w, http.StatusNotFound, protocol.Errorf(protocol.ErrInvalidArgument, "job %q keeps no version %d", clipText(name), req.Version))
		return
	}
	ctx, cancel := l.requestContext(r.Context())
	defer cancel()
	sub, err := jobs.Revert(ctx, principalStore{l: l, principal: p}, name, req.Version, time.Now())
	if err != nil {
		writeJobError(w, err)
		return
	}
	l.logger.Info("job reverted over http", "principal", p, "job", name, "to", req.Version, "version", sub.Version)
	writeJSON(w, http.StatusOK, jobChange(p, sub, false))
}

// jobsPrincipal is the principal whose jobs the path names, if v may
// change them and, where principals authenticate, it is one; otherwise
// it answers the refusal.
func (m *Master) jobsPrincipal(w http.ResponseWriter, r *http.Request, v viewer) (string, bool) {
	token := r.PathValue("principal")
	if !protocol.ValidID(token) {
		writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument, "not a principal: %q", clipText(token)))
		return "", false
	}
	p := recordedPrincipal(token)
	if !v.sees(p) {
		writeError(w, http.StatusForbidden, protocol.Errorf(protocol.ErrUnauthorized, "the jobs of principal %q are not yours to change", token))
		return "", false
	}
	if _, known := m.cfg.Credentials[p]; len(m.cfg.Credentials) > 0 && !known {
		writeError(w, http.StatusNotFound, protocol.Errorf(protocol.ErrInvalidArgument, "no principal %q", token))
		return "", false
	}
	return p, true
}

// decodeJobBody decodes a JSON body of at most limit bytes into out, or
// answers why not.
func decodeJobBody(w http.ResponseWriter, r *http.Request, limit int64, out any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, protocol.Errorf(protocol.ErrInvalidArgument, "the body must be JSON (Content-Type: application/json)"))
		return false
	}
	err := decodeStrictJSON(http.MaxBytesReader(w, r.Body, limit), out)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, protocol.Errorf(protocol.ErrInvalidArgument, "the body is over %d bytes", limit))
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument, "body: %v", err))
		return false
	}
	return true
}

// checkJobFits refuses a job some group of which none of the active
// agents could ever run; with no agent active yet it checks nothing.
func checkJobFits(v *state.View, job *jobs.Job) error {
	var agents []jobs.Agent
	for _, a := range v.Agents() {
		if a.State == state.AgentActive {
			agents = append(agents, jobs.Agent{Resources: a.Resources, Attributes: a.Attributes})
		}
	}
	if len(agents) == 0 {
		return nil
	}
	return jobs.CheckFits(job, agents)
}

// writeJobError answers a refused job change: a bad job file or request
// 400, the leader's own trouble 503.
func writeJobError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, jobs.ErrInvalidJob):
		writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument, "%v", err))
	case errors.Is(err, protocol.ErrInvalidArgument), errors.Is(err, protocol.ErrConflict):
		writeError(w, http.StatusConflict, err)
	default:
		writeError(w, errorStatus(err), err)
	}
}

func jobChange(principal string, sub jobs.Submitted, checked bool) api.JobChange {
	out := api.JobChange{Principal: principal, Name: sub.Job.Name, Version: sub.Version, Unchanged: sub.Unchanged,
		Checked: checked, Groups: []api.JobGroupChange{}}
	for _, c := range sub.Changes {
		out.Groups = append(out.Groups, api.JobGroupChange{Group: c.Group, Start: c.Start, Stop: c.Stop, Replace: c.Replace, Keep: c.Keep})
	}
	return out
}
