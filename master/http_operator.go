package master

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// Operator actions on frameworks and their tasks (operator token; leader
// only, followers redirect with 307, which keeps the method and body):
//
//	POST /v1/frameworks/{id}/tasks/{task}/kill
//	    optional body {"force": true, "grace_period": "10s"} (api.KillRequest):
//	    the task's agent is sent a kill with reason killed_by_operator, which
//	    the task's KILLED status carries; grace_period replaces the task's
//	    own kill grace period; force kills a task launched non-preemptible.
//	    Answers api.TaskKill.
//	POST /v1/frameworks/{id}/teardown
//	    removes the framework, as its own teardown does: its tasks are shut
//	    down, its offers rescinded. Answers api.FrameworkTeardown.
//
// Refusals change nothing and carry the protocol error code (api.Error):
// a bad body or a negative grace period is 400 (ErrInvalidArgument), an
// unknown framework or task 404 (ErrUnknownFramework, ErrUnknownTask), a
// task that already ended 409 (ErrInvalidArgument), and a non-preemptible
// task without force 409 (ErrNotPreemptible).

// maxActionBody bounds the body of an operator action.
const maxActionBody = 4 << 10

func (m *Master) serveKillTask(w http.ResponseWriter, r *http.Request, l *leader) {
	fw, task := protocol.FrameworkID(r.PathValue("id")), protocol.TaskID(r.PathValue("task"))
	if !protocol.ValidID(string(fw)) || !protocol.ValidID(string(task)) {
		writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument, "not a framework and task id"))
		return
	}
	var req api.KillRequest
	if err := decodeOptionalJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	var grace time.Duration
	if req.GracePeriod != "" {
		d, err := time.ParseDuration(req.GracePeriod)
		if err != nil || d < 0 {
			writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument,
				`grace_period %q: want a duration that is not negative, e.g. "10s"`, clipText(req.GracePeriod)))
			return
		}
		grace = d
	}
	t, err := l.operatorKill(fw, task, req.Force, grace)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, api.TaskKill{FrameworkID: fw, TaskID: task, AgentID: t.AgentID, Reason: protocol.ReasonKilledByOperator})
}

func (m *Master) serveTeardown(w http.ResponseWriter, r *http.Request, l *leader) {
	fw := protocol.FrameworkID(r.PathValue("id"))
	if !protocol.ValidID(string(fw)) {
		writeError(w, http.StatusBadRequest, protocol.Errorf(protocol.ErrInvalidArgument, "not a framework id"))
		return
	}
	ctx, cancel := l.requestContext(r.Context())
	defer cancel()
	if err := l.operatorTeardown(ctx, fw); err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, api.FrameworkTeardown{FrameworkID: fw, State: "removed"})
}

// decodeOptionalJSON decodes r's JSON body into v; an empty body leaves v
// as it is. Unknown fields, trailing data and bodies over maxActionBody
// are ErrInvalidArgument.
func decodeOptionalJSON(r *http.Request, v any) error {
	if err := decodeStrictJSON(io.LimitReader(r.Body, maxActionBody), v); err != nil {
		return protocol.Errorf(protocol.ErrInvalidArgument, "body: %v", err)
	}
	return nil
}

// decodeStrictJSON decodes one JSON value from body into v, refusing
// unknown fields and anything after the value; an empty body leaves v as
// it is.
func decodeStrictJSON(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// errorStatus is the HTTP status of a leader's refusal: 404 for what it
// does not know, 409 for what the state does not allow, 403 for what the
// caller may not do, 503 for the rest (no quorum, a lost leadership,
// timeouts), which a client may try again.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, protocol.ErrUnknownFramework), errors.Is(err, protocol.ErrUnknownTask),
		errors.Is(err, protocol.ErrUnknownAgent):
		return http.StatusNotFound
	case errors.Is(err, protocol.ErrInvalidArgument), errors.Is(err, protocol.ErrNotPreemptible):
		return http.StatusConflict
	case errors.Is(err, protocol.ErrUnauthorized):
		return http.StatusForbidden
	}
	return http.StatusServiceUnavailable
}

// writeError answers err with code, and err's protocol code when it has
// one.
func writeError(w http.ResponseWriter, code int, err error) {
	body := api.Error{Error: err.Error()}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		body.Code = pe.Code
	}
	writeJSON(w, code, body)
}
